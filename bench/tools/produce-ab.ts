// A/B of batched produce between checkouts, in one run: each round runs, for every tree in turn (the order
// rotating), one child process that sends `--messages` 256 B messages in sends of `--batch` to a fresh 1-partition
// topic (acks = all; `--in-flight` sends outstanding at a time, a list compares those counts too) and reports msg/s
// and its own CPU per message. For the server's side, time the statements themselves with bench/tools/statement-ab.cjs.
//   npx tsx bench/tools/produce-ab.ts [--rounds 4] [--messages 100000] [--batch 1000] [--in-flight 1,2,4] <tree> <tree> ...
// AB_CPU_PROF=<dir> writes each child's CPU profile there (bench/tools/summarize-cpuprofile.cjs reads them).
// A tree is a checkout with node_modules (a symlink to this one's is enough). PostgreSQL from DATABASE_URL.
import { fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { median, medianRatio } from './abStats.js'

const argv = process.argv.slice(2)
const flag = (name: string, dflt: string): string => {
  const i = argv.indexOf(name)
  if (i < 0) return dflt
  const [, v] = argv.splice(i, 2)
  return v!
}
const rounds = Number(flag('--rounds', '4'))
const total = Number(flag('--messages', '100000'))
const batch = Number(flag('--batch', '1000'))
const inFlights = flag('--in-flight', '1').split(',').map(Number)
/** a directory for the children's CPU profiles (node --cpu-prof) */
const profiles = process.env.AB_CPU_PROF
/** every (tree, sends in flight) pair is one variant */
const variants = argv.flatMap((t) => inFlights.map((inFlight) => ({ tree: path.resolve(t), inFlight })))
const name = (v: (typeof variants)[number]) => (inFlights.length > 1 ? `${v.tree} (${v.inFlight} in flight)` : v.tree)
const url = process.env.DATABASE_URL
if (!url || variants.length === 0)
  throw new Error('usage: DATABASE_URL=... tsx bench/tools/produce-ab.ts [--rounds n] [--messages n] [--batch n] [--in-flight n,...] <tree>...')

interface Report {
  perSecond: number
  cpuUs: number
}

function runChild({ tree, inFlight }: (typeof variants)[number], schema: string, topic: string): Promise<Report> {
  const child = fork(path.join(tree, 'bench', 'tools', 'produce-child.ts'), [], {
    cwd: tree,
    execArgv: ['--import', 'tsx', ...(profiles ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : [])],
    env: { ...process.env, AB_PRODUCE: JSON.stringify({ url, schema, topic, total, batch, inFlight }) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  return new Promise((resolve, reject) => {
    child.on('message', (m: Report) => resolve(m))
    child.on('exit', (code) => reject(new Error(`produce child exited (${code}) before reporting`)))
  })
}

async function main(): Promise<void> {
  const runId = randomBytes(3).toString('hex')
  const schema = `bench_pab_${runId}`
  const rates: number[][] = variants.map(() => [])
  const clientUs: number[][] = variants.map(() => [])
  try {
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < variants.length; k++) {
        const i = (k + r) % variants.length
        const rep = await runChild(variants[i]!, schema, `pab-${runId}-${r}-${i}`)
        rates[i]!.push(rep.perSecond)
        clientUs[i]!.push(rep.cpuUs)
        console.log(
          `round ${r + 1} ${name(variants[i]!)}: ${Math.round(rep.perSecond)} msg/s, client CPU ${rep.cpuUs.toFixed(2)} µs/msg (load ${os.loadavg()[0]!.toFixed(1)})`,
        )
      }
    }
  } finally {
    const pool = new pg.Pool({ connectionString: url, max: 1 })
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await pool.end()
  }
  for (let i = 0; i < variants.length; i++) {
    console.log(
      `${name(variants[i]!)}: batch ${batch}, median ${Math.round(median(rates[i]!))} msg/s (x${medianRatio(rates, i)}), client CPU ${median(clientUs[i]!).toFixed(2)} µs/msg (x${medianRatio(clientUs, i)}); ratios are per-round medians against the first variant`,
    )
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e)
    process.exit(1)
  },
)
