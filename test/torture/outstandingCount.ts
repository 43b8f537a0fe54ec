// Prints how many messages a run's history still has outstanding (checker.ts's `outstanding`), for the drain's polls.
// Its own process, not the orchestrator's: reading a long run's history takes seconds of CPU, and the orchestrator
// also runs the fault proxy that carries every worker's PostgreSQL traffic. Read there, the history froze the proxy
// past the session timeout at every poll (~3.5 s of every ~10 s in a 30-minute run): every lease lapsed, and a group
// that never commits started over from the beginning each time, so its drain could not finish.
//   node --import tsx test/torture/outstandingCount.ts <history dir> <CheckConfig as JSON>
import { outstanding, type CheckConfig } from './checker.js'
import { readHistory } from './history.js'

const [dir, config] = process.argv.slice(2)
process.stdout.write(String(outstanding(readHistory(dir!), JSON.parse(config!) as CheckConfig)))
