// `npm run bench`: the same KafkaJS scenarios against pgQueue (PostgreSQL) and a real Kafka broker, printed as a
// table and written to bench/results/<timestamp>.json. See docs/performance.md.
//   --quick              small counts (CI smoke run; numbers are not asserted)
//   --only <scenario>    produce, consume, fanout, parallel, latency, footprint, transactions, scaling (comma-separated)
//   --backend <name>     pgqueue or kafka (default: both)
//   --repeat <n>         run each scenario n times (backends alternating); the table shows the median run
//   --keep               keep the PostgreSQL schema afterwards
//   --anchors            this library beside PgQue and pgmq on the same server instead (bench/anchors/run.ts)
// PostgreSQL: DATABASE_URL, else the embedded server in .pgdata/bench. Kafka: KAFKA_BROKERS, else a local broker
// (compat-tests/broker). Each run uses a fresh schema, dropped at the end.
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { findBroker, type RunningBroker } from '../compat-tests/broker/index.js'
import { redactConnectionString } from '../src/db/connection.js'
import { ensureEmbeddedPostgres } from '../src/db/embedded.js'
import { runAnchors } from './anchors/run.js'
import { parseArgs, type Backend, type Scenario } from './lib/args.js'
import { serverInfo } from './lib/pgstats.js'
import { markdownTable, medianRows, tableLines } from './lib/report.js'
import type { Target } from './lib/target.js'
import { FULL, QUICK, type Row, type RunContext, type ScenarioRun } from './lib/types.js'
import { consumeScenario, fanoutScenario, parallelScenario } from './scenarios/consume.js'
import { footprintScenario } from './scenarios/footprint.js'
import { latencyScenario } from './scenarios/latency.js'
import { produceScenario } from './scenarios/produce.js'
import { scalingScenario } from './scenarios/scaling.js'
import { transactionsScenario } from './scenarios/transactions.js'

const RUNS: Record<Scenario, ScenarioRun> = {
  produce: produceScenario,
  consume: consumeScenario,
  fanout: fanoutScenario,
  parallel: parallelScenario,
  latency: latencyScenario,
  footprint: footprintScenario,
  transactions: transactionsScenario,
  scaling: scalingScenario,
}

const log = (msg: string) => console.log(`[bench] ${msg}`)

interface Setup {
  target: Target
  ctx: Partial<RunContext>
  info: Record<string, unknown>
  close(): Promise<void>
}

async function setupPgQueue(runId: string, keep: boolean): Promise<Setup> {
  let url = process.env.DATABASE_URL
  let source = 'DATABASE_URL'
  let stopServer = async () => {}
  if (!url) {
    const server = await ensureEmbeddedPostgres({ dataDir: path.resolve('.pgdata', 'bench'), shared: true, log })
    url = server.connectionString
    source = server.reused ? 'embedded .pgdata/bench (reused)' : 'embedded .pgdata/bench'
    stopServer = () => server.stop()
  }
  const schema = `bench_${runId}`
  const pool = new pg.Pool({ connectionString: url, max: 2 })
  const settings = await serverInfo(pool)
  log(`PostgreSQL ${settings.version}: ${redactConnectionString(url)} (${source}), schema ${schema}`)
  return {
    target: { backend: 'pgqueue', url, schema },
    ctx: { pg: { pool, schema } },
    info: { source, url: redactConnectionString(url), schema, settings },
    close: async () => {
      if (!keep)
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch((e: Error) => log(`could not drop schema ${schema}: ${e.message}`))
      await pool.end()
      await stopServer()
    },
  }
}

async function setupKafka(): Promise<Setup> {
  const broker: RunningBroker = await findBroker(log)
  log(`Kafka: ${broker.source} at ${broker.brokers.join(',')} (ready in ${broker.timings.startMs} ms)`)
  // the broker's log directory, for the footprint scenario: the harness's local broker, or BENCH_KAFKA_LOG_DIR
  const localData = path.resolve('compat-tests', '.kafka', 'run', 'data')
  const kafkaDataDir = process.env.BENCH_KAFKA_LOG_DIR ?? (broker.source.startsWith('local') ? localData : undefined)
  return {
    target: { backend: 'kafka', brokers: broker.brokers },
    ctx: { kafkaDataDir },
    info: { source: broker.source, brokers: broker.brokers },
    close: () => broker.stop(),
  }
}

async function main(): Promise<void> {
  if (process.argv.includes('--anchors')) return runAnchors(process.argv.slice(2))
  const args = parseArgs(process.argv.slice(2))
  const sizes = args.quick ? QUICK : FULL
  const startedAt = new Date()
  const runId = `${startedAt.toISOString().replace(/\D/g, '').slice(2, 14)}_${randomBytes(2).toString('hex')}`
  log(`run ${runId}: ${args.quick ? 'quick' : 'full'}; scenarios ${args.scenarios.join(', ')}; backends ${args.backends.join(', ')}`)
  log(
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GB, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  )

  const setups = new Map<Backend, Setup>()
  // per backend, per run: the rows each scenario produced
  const runs: Record<Backend, Row[][]> = { pgqueue: [], kafka: [] }
  const failures: Array<{ backend: Backend; scenario: Scenario; error: string }> = []
  const load: Array<{ backend: Backend; scenario: Scenario; loadavg: number[] }> = []
  try {
    for (const backend of args.backends) setups.set(backend, backend === 'pgqueue' ? await setupPgQueue(runId, args.keep) : await setupKafka())
    // scenario by scenario, both backends back to back, so they meet similar machine load
    for (const scenario of args.scenarios) {
      for (let run = 0; run < args.repeat; run++) {
        for (const backend of args.backends) {
          const setup = setups.get(backend)!
          const tag = `${args.repeat > 1 ? `${runId}r${run}` : runId}`
          const ctx: RunContext = { backend, target: setup.target, sizes, runId: tag, log: (m) => log(`${backend} ${m}`), ...setup.ctx }
          load.push({ backend, scenario, loadavg: os.loadavg() })
          log(`${backend}: ${scenario}${args.repeat > 1 ? ` (run ${run + 1} of ${args.repeat})` : ''} (load ${os.loadavg()[0]!.toFixed(2)})`)
          const started = Date.now()
          try {
            const rows = await RUNS[scenario](ctx)
            ;(runs[backend][run] ??= []).push(...rows)
          } catch (e) {
            const error = (e as Error).stack ?? String(e)
            failures.push({ backend, scenario, error })
            log(`${backend}: ${scenario} FAILED: ${error}`)
          }
          log(`${backend}: ${scenario} took ${((Date.now() - started) / 1000).toFixed(1)} s`)
        }
      }
    }
  } finally {
    for (const setup of setups.values()) await setup.close().catch((e: Error) => log(`cleanup: ${e.message}`))
  }

  const results: Record<Backend, Row[]> = { pgqueue: medianRows(runs.pgqueue.filter(Boolean)), kafka: medianRows(runs.kafka.filter(Boolean)) }
  const lines = tableLines(results)
  const table = markdownTable(lines)
  console.log(`\n${table}\n`)
  const file = path.join(__dirname, 'results', `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(
    file,
    `${JSON.stringify(
      {
        runId,
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        args,
        sizes,
        machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memGB: os.totalmem() / 2 ** 30, node: process.version, load },
        backends: Object.fromEntries([...setups].map(([b, s]) => [b, s.info])),
        results,
        runs,
        table: lines.map(({ pgqueue, kafka, ...l }) => ({ ...l, pgqueue: pgqueue?.value, kafka: kafka?.value })),
        failures,
      },
      null,
      2,
    )}\n`,
  )
  log(`results: ${path.relative(process.cwd(), file)}`)
  if (failures.length > 0) {
    log(`${failures.length} scenario run(s) failed: ${failures.map((f) => `${f.backend} ${f.scenario}`).join(', ')}`)
    process.exitCode = 1
  }
}

main().catch((e: Error) => {
  console.error(e)
  process.exitCode = 1
})
