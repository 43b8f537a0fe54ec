// Server cost of a consumer (pgQueue, issue 36): the CPU its PostgreSQL backends use per delivered message while
// one producer sends 500 msg/s in 100 ms ticks and one eachBatch member keeps up, read from /proc/<pid>/stat of
// the backends with the consumer's application_name (bench/lib/backendCpu.ts). Steps: 5, 73 and 200 time
// partitions of the message table (8 topic partitions), 1, 8 and 64 topic partitions (73 time partitions), and 100
// idle groups (server CPU per second with no traffic). Each case has a schema of its own, so the message table
// has exactly that many time partitions: 5 = daily partitions (the current one and 4 premade), 73 = hourly (the
// current one and three days premade), 200 = hourly with 127 past hours too (a 5-day retention's worth).
// Only meaningful when the bench runs on the database's machine; the row says when /proc could not be read.
import type { Consumer, Producer } from 'kafkajs'
import pg from 'pg'
import { backendCpu } from '../lib/backendCpu.js'
import { messages } from '../lib/produce.js'
import { makeKafka, type Target } from '../lib/target.js'
import type { Row, RunContext } from '../lib/types.js'

const RATE = 500
const TICK_MS = 100

interface CostCase {
  timePartitions: 5 | 73 | 200
  topicPartitions: number
}

interface Probe {
  /** server CPU µs per delivered message, or per second for idle groups */
  value: number
  cpuMs: number
  delivered: number
  seconds: number
  backends: number
  timePartitions: number
  /** index scans on the message table's partitions per delivered message (every client of the schema) */
  messageIndexScansPerMessage: number
  available: boolean
  /** messages the producer sent in the window (short of 500/s: the producer did not keep up, not the member) */
  sent?: number
}

function withApplicationName(url: string, name: string): string {
  const u = new URL(url)
  u.searchParams.set('application_name', name)
  return u.toString()
}

/** A schema of its own whose message table has `timePartitions` partitions. */
async function caseTarget(ctx: RunContext, name: string, timePartitions: CostCase['timePartitions']): Promise<Target> {
  if (ctx.target.backend !== 'pgqueue') throw new Error('server cost: pgqueue only')
  const schema = `${ctx.target.schema}_${name}`.slice(0, 63)
  const interval = timePartitions === 5 ? '1 day' : '1 hour'
  const target: Target = { ...ctx.target, schema, options: { ...ctx.target.options, partitioning: { interval, premake: 4 } } }
  const admin = makeKafka(target, 'bench-admin').admin()
  await admin.connect() // migrates the schema
  await admin.disconnect()
  if (timePartitions === 200) {
    // ensure_partitions(at) makes the partition holding `at` and the 72 after it
    for (const hours of [127, 54])
      await ctx.pg!.pool.query(`SELECT "${schema}".metadata_queue_ensure_partitions(now() - $1 * interval '1 hour')`, [hours])
  }
  return target
}

async function countTimePartitions(pool: pg.Pool, schema: string): Promise<number> {
  const res = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = to_regclass(quote_ident($1) || '.metadata_queue_message')`,
    [schema],
  )
  return res.rows[0]!.n
}

async function messageIndexScans(pool: pg.Pool, schema: string): Promise<number> {
  const res = await pool.query<{ n: string }>(
    `SELECT COALESCE(sum(idx_scan), 0)::text AS n FROM pg_stat_user_tables WHERE schemaname = $1 AND relname LIKE 'metadata\\_queue\\_message\\_p%'`,
    [schema],
  )
  return Number(res.rows[0]!.n)
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** One producer at RATE msg/s in TICK_MS ticks and one eachBatch member; CPU of the member's backends over `seconds`. */
async function probeConsumer(ctx: RunContext, c: CostCase, seconds: number): Promise<Probe> {
  const name = `cost_t${c.timePartitions}_p${c.topicPartitions}`
  const target = await caseTarget(ctx, name, c.timePartitions)
  const schema = (target as { schema: string }).schema
  const pool = ctx.pg!.pool
  const appName = `bench-cost-${ctx.runId}-${name}`.slice(0, 63)
  const topic = `bench-cost-${ctx.runId}`
  const admin = makeKafka(target, 'bench-admin').admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: c.topicPartitions }] })
  await admin.disconnect()
  const consumerTarget = { ...target, url: withApplicationName((target as { url: string }).url, appName) } as Target
  const consumer: Consumer = makeKafka(consumerTarget, 'bench-cost-consumer').consumer({ groupId: `g-${name}`, maxWaitTimeInMs: 5000 })
  const producer: Producer = makeKafka(target, 'bench-cost-producer').producer()
  let delivered = 0
  let sent = 0
  let stopped = false
  let ticker: Promise<void> = Promise.resolve()
  try {
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachBatch: async ({ batch }) => {
        delivered += batch.messages.length
      },
    })
    await producer.connect()
    const perTick = (RATE * TICK_MS) / 1000
    ticker = (async () => {
      let next = performance.now()
      while (!stopped) {
        await producer.send({ topic, messages: messages(perTick, sent, c.topicPartitions) })
        sent += perTick
        next += TICK_MS
        await sleep(Math.max(0, next - performance.now()))
      }
    })()
    await sleep(Math.min(8000, seconds * 300)) // warm-up: the member joined, the pool grown, the read floors found
    const cpu = backendCpu(pool, appName)
    const scansBefore = await messageIndexScans(pool, schema)
    await cpu.start()
    const from = delivered
    const sentFrom = sent
    const started = performance.now()
    await sleep(seconds * 1000)
    const used = await cpu.stop()
    const got = delivered - from
    const sentInWindow = sent - sentFrom
    const elapsed = (performance.now() - started) / 1000
    await sleep(1200) // backends flush their statistics at most once a second
    const scans = (await messageIndexScans(pool, schema)) - scansBefore
    return {
      value: (used.cpuMs * 1000) / Math.max(1, got),
      cpuMs: used.cpuMs,
      delivered: got,
      seconds: elapsed,
      backends: used.backends,
      timePartitions: await countTimePartitions(pool, schema),
      messageIndexScansPerMessage: scans / Math.max(1, got),
      available: used.available,
      sent: sentInWindow,
    }
  } finally {
    stopped = true
    await ticker.catch(() => undefined)
    await producer.disconnect().catch(() => undefined)
    await consumer.disconnect().catch(() => undefined)
    // BENCH_COST_KEEP=1 keeps the case's schema, for EXPLAIN
    if (!process.env.BENCH_COST_KEEP) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined)
  }
}

/** `groups` groups of one member each (one client, one pool) on an 8-partition topic nobody writes to. */
async function probeIdle(ctx: RunContext, groups: number, seconds: number): Promise<Probe> {
  const name = `cost_idle${groups}`
  const target = await caseTarget(ctx, name, 73)
  const schema = (target as { schema: string }).schema
  const pool = ctx.pg!.pool
  const appName = `bench-cost-${ctx.runId}-${name}`.slice(0, 63)
  const topic = `bench-cost-idle-${ctx.runId}`
  const admin = makeKafka(target, 'bench-admin').admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: 8 }] })
  await admin.disconnect()
  // one client for all the groups, with room for their joins at once (each join holds a connection for a moment)
  const idleTarget = { ...target, url: withApplicationName((target as { url: string }).url, appName) } as Target & { options?: object }
  idleTarget.options = { ...idleTarget.options, pool: { max: 16, connectionTimeoutMillis: 30_000 } }
  const kafka = makeKafka(idleTarget as Target, 'bench-cost-idle')
  const consumers: Consumer[] = []
  try {
    for (let i = 0; i < groups; i++) {
      const consumer = kafka.consumer({ groupId: `g-${name}-${i}` })
      consumers.push(consumer)
      await consumer.connect()
      await consumer.subscribe({ topic, fromBeginning: true })
      await consumer.run({ eachBatch: async () => {} })
    }
    // joined, and past the first two fetches of each (unbounded until a read horizon and a floor are known; the
    // members fetch every maxWaitTimeInMs, 5 s)
    await sleep(seconds >= 30 ? 20_000 : 12_000)
    const cpu = backendCpu(pool, appName)
    await cpu.start()
    const started = performance.now()
    await sleep(seconds * 1000)
    const used = await cpu.stop()
    const elapsed = (performance.now() - started) / 1000
    return {
      value: used.cpuMs / elapsed,
      cpuMs: used.cpuMs,
      delivered: 0,
      seconds: elapsed,
      backends: used.backends,
      timePartitions: await countTimePartitions(pool, schema),
      messageIndexScansPerMessage: 0,
      available: used.available,
    }
  } finally {
    await Promise.all(consumers.map((c) => c.disconnect().catch(() => undefined)))
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined)
  }
}

function costRow(key: string, label: string, unit: string, p: Probe): Row {
  const { value, ...detail } = p
  return {
    key,
    scenario: 'scaling',
    label,
    unit,
    value,
    ...(p.available ? {} : { note: 'backends not readable in /proc (bench not on the database machine?)' }),
    detail: { ...detail, loadavg: undefined },
  }
}

/** The server-cost rows (pgQueue only). `quick`: the 73-time-partition case alone, over 8 s. */
export async function serverCostSteps(ctx: RunContext, quick = false): Promise<Row[]> {
  if (ctx.backend !== 'pgqueue' || !ctx.pg) return []
  const seconds = quick ? 8 : 30
  const cases: CostCase[] = quick
    ? [{ timePartitions: 73, topicPartitions: 8 }]
    : [
        { timePartitions: 5, topicPartitions: 8 },
        { timePartitions: 73, topicPartitions: 8 },
        { timePartitions: 200, topicPartitions: 8 },
        { timePartitions: 73, topicPartitions: 1 },
        { timePartitions: 73, topicPartitions: 64 },
      ]
  // BENCH_COST_CASES=t200p8,idle runs only those cases (for profiling one of them)
  const only = process.env.BENCH_COST_CASES?.split(',').map((x) => x.trim())
  const wanted = (name: string) => !only || only.includes(name)
  const rows: Row[] = []
  for (const c of cases.filter((x) => wanted(`t${x.timePartitions}p${x.topicPartitions}`))) {
    // a case that fails (the machine too loaded to join in time) is logged; the others' rows are kept
    const p = await probeConsumer(ctx, c, seconds).catch((e: Error) => (ctx.log(`server cost case failed: ${e.message}`), undefined))
    if (!p) continue
    ctx.log(
      `server cost, ${p.timePartitions} time partitions, ${c.topicPartitions} topic partitions: ${p.value.toFixed(1)} µs CPU per message (${p.cpuMs.toFixed(0)} ms over ${p.seconds.toFixed(1)} s, ${p.delivered} messages of ${p.sent} sent, ${p.backends} backends, ${p.messageIndexScansPerMessage.toFixed(1)} message index scans per message)`,
    )
    rows.push(
      costRow(
        `scaling.serverCost.t${c.timePartitions}.p${c.topicPartitions}`,
        `scaling: consumer's server CPU per message at ${RATE} msg/s, ${p.timePartitions} time partitions, ${c.topicPartitions} topic partition${c.topicPartitions === 1 ? '' : 's'}`,
        'µs/msg',
        p,
      ),
    )
  }
  const idle =
    !quick && wanted('idle')
      ? await probeIdle(ctx, 100, seconds).catch((e: Error) => (ctx.log(`server cost idle case failed: ${e.message}`), undefined))
      : undefined
  if (idle) {
    const p = idle
    ctx.log(`server cost, 100 idle groups: ${p.value.toFixed(1)} ms CPU per second (${p.backends} backends)`)
    rows.push(costRow('scaling.serverCost.idle100', "scaling: 100 idle groups' server CPU (no traffic)", 'ms/s', p))
  }
  return rows
}
