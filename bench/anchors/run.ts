// `npm run bench -- --anchors`: this library beside PgQue 0.2.0 and pgmq 1.5.1 on the same PostgreSQL server, in
// one sitting. The peers are installed from their published SQL (vendored under bench/anchors/<name>/ with their
// licences) into a scratch database, which also holds our schema; it is dropped at the end.
//   --quick         20,000 messages instead of 200,000 (--messages <n>: n)
//   --repeat <n>    rounds (default 3); the table shows each system's median
//   --only <s,...>  produce, consume, fanout, keyed
//   --keep          keep the scratch database
// Scenarios (~200 B JSON messages, one partition / queue): produce in sends of 100 and of 1,000 awaited one at a
// time; consume with one consumer; fan-out to 3 and 10 groups reading one stored copy (pgmq: one copy per
// consumer, it has no fan-out, shown as "(copies)"). Consume rates are timed from each scenario's first delivery.
// keyed (ours only, issue #36): sends of 1,000 keyed messages to 1 partition and over 1,024 partitions.
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { redactConnectionString } from '../../src/db/connection.js'
import { ensureEmbeddedPostgres } from '../../src/db/embedded.js'
import { findBroker, type RunningBroker } from '../../compat-tests/broker/index.js'
import { serverInfo } from '../lib/pgstats.js'
import type { Target } from '../lib/target.js'
import { oursDrain, oursLoad, oursProduce, oursProduceKeyed } from './ours.js'
import { anchorsTable, type AnchorRow, type System } from './table.js'
import { installPeers, peerDrain, peerLoad, peerProduce, PEERS, VERSIONS } from './peers.js'

/** KafkaJS programs: this library, and a real broker with --kafka (the same code through DATAHUB_MESSAGING_TRANSPORT) */
const viaKafkaJs = (s: System): s is 'ours' | 'kafka' => s === 'ours' || s === 'kafka'
const SCENARIOS = ['produce', 'consume', 'fanout', 'keyed'] as const
type Scenario = (typeof SCENARIOS)[number]

const LABELS: Record<string, [string, string]> = {
  'produce.batch100': ['produce, batch 100', 'msg/s'],
  'produce.batch1000': ['produce, batch 1,000', 'msg/s'],
  'consume.one': ['consume, one consumer (from first delivery)', 'msg/s'],
  'fanout.3': ['fan-out, three groups (one stored copy; from first delivery)', 'deliveries/s'],
  'fanout.10': ['fan-out, ten groups (one stored copy; from first delivery)', 'deliveries/s'],
  'keyed.p1': ['keyed produce, 1,000 per send, 1 partition (ours only)', 'msg/s'],
  'keyed.p1024': ['keyed produce, 1,000 per send, over 1,024 partitions (ratio: to 1 partition)', 'msg/s'],
}

const log = (m: string) => console.log(`[anchors] ${m}`)

interface Args {
  quick: boolean
  repeat: number
  only: Scenario[]
  keep: boolean
  /** a Kafka broker beside them (KAFKA_BROKERS, else the harness's local broker) */
  kafka: boolean
  /** messages per scenario (default 200,000; --quick 20,000) */
  messages?: number
}

function parse(argv: string[]): Args {
  const args: Args = { quick: false, repeat: 3, only: [...SCENARIOS], keep: false, kafka: false }
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined]
    if (flag === '--anchors') continue
    else if (flag === '--quick') args.quick = true
    else if (flag === '--keep') args.keep = true
    else if (flag === '--kafka') args.kafka = true
    else if (flag === '--messages') args.messages = Number(inline ?? argv[++i])
    else if (flag === '--repeat') args.repeat = Number(inline ?? argv[++i])
    else if (flag === '--only') args.only = (inline ?? argv[++i] ?? '').split(',') as Scenario[]
    else
      throw new Error(
        `unknown argument ${argv[i]} (anchors: --quick, --messages <n>, --repeat <n>, --only produce,consume,fanout,keyed, --kafka, --keep)`,
      )
  }
  if (!Number.isInteger(args.repeat) || args.repeat < 1) throw new Error('--repeat needs a positive count')
  for (const s of args.only) if (!SCENARIOS.includes(s)) throw new Error(`unknown anchors scenario "${s}"`)
  return args
}

/** ~200 B JSON documents, random content so no codec or TOAST compression helps anyone. */
function payloads(): string[] {
  return Array.from({ length: 1024 }, () => JSON.stringify({ id: randomBytes(8).toString('hex'), data: randomBytes(85).toString('hex') }))
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

export async function runAnchors(argv: string[]): Promise<void> {
  const args = parse(argv)
  const total = args.messages ?? (args.quick ? 20_000 : 200_000)
  if (!Number.isInteger(total) || total < 1000) throw new Error('--messages needs a count of at least 1,000')
  const startedAt = new Date()
  const runId = `${startedAt.toISOString().replace(/\D/g, '').slice(2, 14)}_${randomBytes(2).toString('hex')}`
  let url = process.env.DATABASE_URL
  let stopServer = async () => {}
  if (!url) {
    const server = await ensureEmbeddedPostgres({ dataDir: path.resolve('.pgdata', 'bench'), shared: true, log })
    url = server.connectionString
    stopServer = () => server.stop()
  }
  const database = `anchors_${runId}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  const settings = await serverInfo(admin as unknown as pg.Pool)
  await admin.query(`CREATE DATABASE "${database}"`)
  const scratch = new URL(url)
  scratch.pathname = `/${database}`
  const dbUrl = scratch.toString()
  log(
    `PostgreSQL ${String(settings.version)}: ${redactConnectionString(url)}, scratch database ${database}; ${total} messages, ${args.repeat} rounds`,
  )
  log(
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (shared with other work: compare ratios)`,
  )
  const texts = payloads()
  const buffers = texts.map((t) => Buffer.from(t))
  // a pool wait of 10 s instead of 1 s: ten member processes on a loaded 2-core machine took longer to connect
  const ours: Target = { backend: 'pgqueue', url: dbUrl, schema: `anchors_${runId}`, options: { pool: { connectionTimeoutMillis: 10_000 } } }
  let broker: RunningBroker | undefined
  if (args.kafka) {
    broker = await findBroker(log)
    log(`Kafka: ${broker.source} at ${broker.brokers.join(',')}`)
  }
  const kafka: Target | undefined = broker ? { backend: 'kafka', brokers: broker.brokers } : undefined
  const SYSTEMS: System[] = ['ours', ...PEERS, ...(kafka ? (['kafka'] as const) : [])]
  const targetOf = (s: 'ours' | 'kafka'): Target => (s === 'ours' ? ours : kafka!)
  const runs = new Map<string, Record<System, number[]>>()
  const record = (key: string, system: System, value: number) => {
    let r = runs.get(key)
    if (!r) runs.set(key, (r = { ours: [], pgque: [], pgmq: [], kafka: [] }))
    r[system].push(value)
    log(`  ${system} ${key}: ${Math.round(value).toLocaleString('en-US')} ${LABELS[key]![1]}`)
  }
  const load: number[][] = []
  const failures: Array<{ round: number; system: System; scenario: Scenario; error: string }> = []
  const file = path.join(__dirname, '..', 'results', `anchors-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`)
  /** The results so far (medians of the rounds done): written after every round, so a run cut short keeps them. */
  const write = (rounds: number): AnchorRow[] => {
    const rows: AnchorRow[] = [...runs].map(([key, r]) => {
      const values = Object.fromEntries((['ours', ...PEERS, 'kafka'] as const).map((s) => [s, r[s].length ? median(r[s]) : null])) as Record<
        System,
        number | null
      >
      // keyed over 1,024 partitions: against the same sends to one partition (issue #36); other rows: the best peer
      const best =
        key === 'keyed.p1024' ? median(runs.get('keyed.p1')?.ours ?? [0]) : key === 'keyed.p1' ? 0 : Math.max(...PEERS.map((p) => values[p] ?? 0))
      return {
        key,
        label: LABELS[key]![0],
        unit: LABELS[key]![1],
        values,
        runs: r,
        ratio: values.ours !== null && best > 0 ? values.ours / best : null,
      }
    })
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const doc = {
      kind: 'anchors',
      runId,
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      args: { ...args, repeat: rounds },
      requestedRounds: args.repeat,
      messages: total,
      messageBytes: Math.round(buffers.reduce((n, b) => n + b.length, 0) / buffers.length),
      peers: VERSIONS,
      machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memGB: os.totalmem() / 2 ** 30, node: process.version, load },
      server: { url: redactConnectionString(url), settings },
      rows,
      failures,
    }
    fs.writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`)
    return rows
  }
  try {
    await installPeers(dbUrl, log)
    for (let round = 0; round < args.repeat; round++) {
      if (round > 0) {
        write(round)
        log(`results of ${round} round(s) so far: ${path.relative(process.cwd(), file)}`)
      }
      // a different system goes first in each round, so none always meets the machine's state after the same one
      const order = SYSTEMS.map((_, i) => SYSTEMS[(i + round) % SYSTEMS.length]!)
      for (const scenario of args.only) {
        for (const system of order) {
          load.push(os.loadavg())
          log(`round ${round + 1}: ${system} ${scenario} (load ${os.loadavg()[0]!.toFixed(2)})`)
          const tag = `r${round}_${scenario}`
          try {
            if (scenario === 'produce') {
              for (const batch of [100, 1000]) {
                const name = `${tag}_b${batch}`
                const value = viaKafkaJs(system)
                  ? await oursProduce(targetOf(system), `anchors-${name}`, buffers, total, batch)
                  : await peerProduce(dbUrl, system, name, texts, total, batch)
                record(`produce.batch${batch}`, system, value)
              }
            } else if (scenario === 'consume') {
              if (viaKafkaJs(system)) {
                await oursLoad(targetOf(system), `anchors-${tag}`, buffers, total)
                record('consume.one', system, await oursDrain(targetOf(system), `anchors-${tag}`, [`${tag}-g`]))
              } else {
                await peerLoad(dbUrl, system, [tag], ['c'], texts, total)
                record('consume.one', system, await peerDrain(dbUrl, system, [{ queue: tag, consumer: 'c' }], total))
              }
            } else if (scenario === 'keyed') {
              // issue #36: the same keyed sends to 1 and to 1,024 partitions (the peers have no partitions)
              if (system !== 'ours') continue
              for (const partitions of [1, 1024]) {
                record(`keyed.p${partitions}`, system, await oursProduceKeyed(ours, `anchors-${tag}-${partitions}`, buffers, total, partitions))
              }
            } else {
              for (const groups of [3, 10]) {
                const name = `${tag}_${groups}`
                const ids = Array.from({ length: groups }, (_, i) => `g${i}`)
                if (viaKafkaJs(system)) {
                  await oursLoad(targetOf(system), `anchors-${name}`, buffers, total)
                  record(
                    `fanout.${groups}`,
                    system,
                    await oursDrain(
                      targetOf(system),
                      `anchors-${name}`,
                      ids.map((g) => `${name}-${g}`),
                    ),
                  )
                } else if (system === 'pgque') {
                  await peerLoad(dbUrl, system, [name], ids, texts, total)
                  record(
                    `fanout.${groups}`,
                    system,
                    await peerDrain(
                      dbUrl,
                      system,
                      ids.map((consumer) => ({ queue: name, consumer })),
                      total,
                    ),
                  )
                }
                // pgmq: no fan-out (a copy per consumer group is a different workload); left out
              }
            }
          } catch (e) {
            // one failed scenario (e.g. a member that could not connect on an overloaded machine) is reported, not fatal
            failures.push({ round: round + 1, system, scenario, error: (e as Error).message })
            log(`round ${round + 1}: ${system} ${scenario} FAILED: ${(e as Error).message}`)
          }
        }
      }
    }
  } finally {
    if (!args.keep) {
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch((e: Error) => log(`could not drop ${database}: ${e.message}`))
    }
    await admin.end()
    await stopServer()
    await broker?.stop()
  }

  const rows = write(args.repeat)
  console.log(`\n${anchorsTable(rows)}\n`)
  log(`results: ${path.relative(process.cwd(), file)}`)
}
