// A/B of the consume scenario between checkouts, in one run: the topic is filled once, then each round drains it
// with a fresh group (one member process, eachBatch or eachMessage) from each tree in turn, alternating which goes
// first. Prints every drain and the median ratio of each tree to the first. PostgreSQL from DATABASE_URL.
//   npx tsx bench/tools/consume-ab.ts [--rounds 4] [--messages 200000] [--mode eachBatch] <tree> <tree> ...
// A tree is a checkout with node_modules (a symlink to this one's is enough); this checkout fills the topic.
// Besides msg/s (wall clock: noisy on a shared machine) it prints the member's CPU per message. For the server's
// side, time the statements themselves with bench/tools/statement-ab.cjs.
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { prefill } from '../lib/produce.js'
import { createTopic, highWatermarks, type Target } from '../lib/target.js'
import { runMembers } from '../lib/workers.js'
import type { WorkerConfig } from '../worker.js'
import { median, medianRatio } from './abStats.js'

const argv = process.argv.slice(2)
const flag = (name: string, dflt: string): string => {
  const i = argv.indexOf(name)
  if (i < 0) return dflt
  const [, v] = argv.splice(i, 2)
  return v!
}
const rounds = Number(flag('--rounds', '4'))
const total = Number(flag('--messages', '200000'))
const mode = flag('--mode', 'eachBatch') as WorkerConfig['mode']
const trees = argv.map((t) => path.resolve(t))
const url = process.env.DATABASE_URL
if (!url || trees.length === 0)
  throw new Error('usage: DATABASE_URL=... tsx bench/tools/consume-ab.ts [--rounds n] [--messages n] [--mode m] <tree>...')

async function main(): Promise<void> {
  const runId = randomBytes(3).toString('hex')
  const target: Target = { backend: 'pgqueue', url: url!, schema: `bench_ab_${runId}` }
  const topic = `ab-${runId}`
  await createTopic(target, topic, 1)
  await prefill(target, topic, total)
  const ends = await highWatermarks(target, topic)
  const rates: number[][] = trees.map(() => [])
  const clientUs: number[][] = trees.map(() => [])
  try {
    for (let r = 0; r < rounds; r++) {
      const order = trees.map((_, i) => (i + r) % trees.length)
      for (const i of order) {
        const config: WorkerConfig = { target, topic, groupId: `ab-${runId}-${r}-${i}`, mode, latency: false, gated: true, maxWaitTimeInMs: 100 }
        const [g] = await runMembers([config], topic, 1, ends, { worker: path.join(trees[i]!, 'bench', 'worker.ts') })
        const m = g!.members[0]!
        rates[i]!.push(g!.perSecond)
        clientUs[i]!.push((m.cpuMs * 1000) / m.cpuMessages)
        console.log(
          `round ${r + 1} ${trees[i]}: ${Math.round(g!.perSecond)} msg/s, member CPU ${clientUs[i]!.at(-1)!.toFixed(2)} µs/msg (load ${os.loadavg()[0]!.toFixed(1)})`,
        )
      }
    }
  } finally {
    const pool = new pg.Pool({ connectionString: url, max: 1 })
    await pool.query(`DROP SCHEMA IF EXISTS "${target.schema}" CASCADE`)
    await pool.end()
  }
  for (let i = 0; i < trees.length; i++) {
    console.log(
      `${trees[i]}: median ${Math.round(median(rates[i]!))} msg/s (x${medianRatio(rates, i)}), member CPU ${median(clientUs[i]!).toFixed(2)} µs/msg (x${medianRatio(clientUs, i)}); ratios are per-round medians against the first tree`,
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
