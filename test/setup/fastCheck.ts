// Every fast-check property of a run draws from one seed, FC_SEED (vitest.config.ts picks and prints one when it is
// unset), so a failure replays with FC_SEED=<seed>: fast-check's message names the seed and the path, and the seed
// is also printed here next to the file that failed. Properties without numRuns get 100 times FC_RUNS_MULTIPLIER.
import fc from 'fast-check'
import { afterEach } from 'vitest'
import { runs } from '../helpers/property.js'

const seed = Number(process.env.FC_SEED)
if (Number.isInteger(seed)) {
  fc.configureGlobal({ seed, numRuns: runs(100) })
  afterEach(({ task }) => {
    if (task.result?.state === 'fail') console.error(`replay: FC_SEED=${seed} npx vitest run ${task.file.filepath} -t ${JSON.stringify(task.name)}`)
  })
} else {
  fc.configureGlobal({ numRuns: runs(100) })
}
