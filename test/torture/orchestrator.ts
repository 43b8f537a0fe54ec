// One torture run: set up the schema (on a private PostgreSQL) or the Kafka topics, start the workers, inject
// faults for `seconds`, drain (faults off, producers stopped, consumers left to catch up), audit every topic with a
// fresh group, and check the recorded history.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Kafka } from 'kafkajs'
import pg from 'pg'
import { quoteIdent } from '../../src/db/identifiers.js'
import { originOf } from '../../src/deadLetter/index.js'
import { logLevel } from '../../src/kafkajs/exports.js'
import { check, type CheckConfig, type CheckResult } from './checker.js'
import { injectFault } from './faults.js'
import { Fleet, type SlotPlan, type SlotSpec } from './fleet.js'
import { createRecorder, readHistory, type Recorder } from './history.js'
import type { Options } from './options.js'
import { startFaultProxy, type FaultProxy } from './proxy.js'
import { createRng } from './rng.js'
import { startPrivateServer, type PrivateServer } from './server.js'
import { secondsToFirstViolation, type RunPhases } from './summary.js'
import {
  COMMIT_STEPS,
  type CommitStep,
  type Connection,
  type ProducerOp,
  type ConsumerDraw,
  type DeadLetterPlan,
  type Handler,
  type TopicPlan,
} from './spec.js'
import { DRAIN_FILE, kafkaFor } from './workers/common.js'

export interface RunResult {
  runId: string
  dir: string
  result: CheckResult
  checkConfig: CheckConfig
  operations: Record<string, number>
  /** how long the fault phase and the drain took, and the history's size */
  phases: RunPhases
  /** seconds from the workers being ready to the first event of a violation */
  firstViolationAfter?: number
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export async function runTorture(opts: Options, log: (line: string) => void): Promise<RunResult> {
  const runId = `tt${opts.seed.toString(36)}${randomBytes(2).toString('hex')}`
  const dir = opts.dir ?? mkdtempSync(path.join(os.tmpdir(), `torture-${runId}-`))
  mkdirSync(dir, { recursive: true })
  const rec = createRecorder(dir, 'orch')
  const rng = createRng(opts.seed)
  const pgq = opts.transport === 'pgqueue'
  const name = (s: string) => (pgq ? s : `${runId}-${s}`)
  const topics: TopicPlan[] = [
    { name: name('a'), partitions: 4 },
    { name: name('b'), partitions: 2, aggressive: pgq && opts.maintenance },
    ...(pgq && opts.maintenance ? [{ name: name('cap'), partitions: 2, lossy: true }] : []),
  ]
  const eosIn: TopicPlan = { name: name('eos-in'), partitions: 2 }
  const eosOut: TopicPlan = { name: name('eos-out'), partitions: 2 }
  // a topic with poison messages, consumed by a group whose handler is wrapped by deadLetter()
  const dlIn: TopicPlan = { name: name('dl-in'), partitions: 2, poison: true }
  const dlOut: TopicPlan = { name: name('dl-in-dlq'), partitions: 1 }
  const all = [...topics, ...(opts.eos ? [eosIn, eosOut] : []), ...(opts.deadLetter ? [dlIn, dlOut] : [])]
  // the dead-letter group's mode and handler kind, drawn per run; its retry topics are created but not audited
  // (their offsets are the wrapper's, and a hop is checked where it ends: on the dead-letter topic)
  const dlPlan: Pick<DeadLetterPlan, 'mode' | 'around'> = {
    mode: pgq && rng.chance(0.5) ? 'retry-topics' : 'blocking',
    around: rng.chance(0.5) ? 'batch' : 'message',
  }
  const retryTopics: TopicPlan[] =
    opts.deadLetter && dlPlan.mode === 'retry-topics' ? [1, 2].map((n) => ({ name: `${dlIn.name}.retry-${n}`, partitions: 2 })) : []

  let server: PrivateServer | undefined
  let proxy: FaultProxy | undefined
  /** the orchestrator's own connections (observer, faults, pollers): no faults, but it follows a failover */
  let directProxy: FaultProxy | undefined
  const schema = `torture_${runId}`
  const appPrefix = `torture_${runId}_`
  let adminUrl: string | undefined
  if (pgq) {
    if (!opts.databaseUrl) {
      server = await startPrivateServer({ standby: opts.faults.includes('promote') })
      directProxy = await startFaultProxy(server.port)
    }
    adminUrl = opts.databaseUrl ?? `postgres://postgres@127.0.0.1:${directProxy!.port}/postgres`
    proxy = await startFaultProxy(Number(new URL(opts.databaseUrl ?? server!.url).port || 5432))
  }
  const direct: Connection = { transport: opts.transport, pgUrl: adminUrl, schema, brokers: opts.brokers }
  const viaProxy = (writer: string) => {
    if (!pgq) return undefined
    const u = new URL(adminUrl!)
    u.hostname = '127.0.0.1'
    u.port = String(proxy!.port)
    u.searchParams.set('application_name', `${appPrefix}${writer}`)
    return u.toString()
  }
  const bizTable = `${quoteIdent(schema)}.torture_business`
  log(`run ${runId}: seed ${opts.seed}, ${opts.transport}, ${opts.seconds} s, history in ${dir}`)
  const probe: TopicPlan = { name: name('probe'), partitions: 1 }
  await setUp(opts, direct, [...all, ...retryTopics, probe], bizTable)
  // sendWith at REPEATABLE READ / SERIALIZABLE is drawn only where the library takes it (issue 34 item 3)
  const outboxRefused = pgq ? await refusedOutboxLevels(direct, probe.name) : []
  if (outboxRefused.length > 0) log(`outbox: the library refuses ${outboxRefused.join(', ')}; not drawn`)
  opts = { ...opts, producerOps: opts.producerOps.filter((op) => !outboxRefused.includes(op)) }

  const fleet = new Fleet(rec, opts.seed, viaProxy)
  const common = {
    dir,
    stuckBoundMs: opts.stuckBoundMs,
    sessionTimeoutMs: opts.sessionTimeoutMs,
    transport: opts.transport,
    schema,
    brokers: opts.brokers,
  }
  const slots = planSlots(opts, rng, topics, { eosIn, eosOut, dlIn, dlOut }, name, bizTable, runId, dlPlan)
  for (const s of slots) fleet.add({ ...common, ...s } as SlotSpec)
  log(`plan: dead-letter ${dlPlan.mode} around ${dlPlan.around}; ${slots.map(describeSlot).filter(Boolean).join('; ')}`)
  const groups = new Map<string, Set<string>>()
  for (const s of slots) {
    if (s.role === 'consumer') groups.set(s.group, new Set([...(groups.get(s.group) ?? []), ...s.subscribe]))
    if (s.role === 'transform') groups.set(s.group, new Set([s.input]))
  }

  const observer = kafkaFor(direct, `${runId}-observer`)
  const admin = observer.admin()
  await admin.connect()
  const pollers = [pollOffsets(admin, groups, rec)]
  if (pgq) pollers.push(pollStatements(adminUrl!, appPrefix, opts.stuckBoundMs, rec))

  // the clock starts once every worker is up (process start-up is slow on a loaded machine)
  await Promise.race([Promise.all(fleet.slots.map((s) => s.ready)), sleep(120_000)])
  log(`workers ready: ${fleet.slots.map((s) => s.writer).join(' ')}`)
  rec.record({ k: 'stat', name: 'workers.ready', n: Date.now() })
  // faults at random times
  const started = Date.now()
  const faultsUntil = started + opts.seconds * 1000
  const injected = new Map<string, number>()
  const progress = setInterval(() => log(progressLine(dir, fleet, injected, (Date.now() - started) / 1000, opts.seconds)), PROGRESS_EVERY_MS)
  await sleep(Math.min(3000, opts.seconds * 200))
  while (Date.now() < faultsUntil && opts.faults.length > 0) {
    await sleep(Math.round(opts.faultEveryMs * (0.3 + 1.4 * rng.next())))
    if (Date.now() >= faultsUntil) break
    const kind = rng.pick(opts.faults)
    injected.set(kind, (injected.get(kind) ?? 0) + 1)
    await injectFault(kind, {
      fleet,
      rec,
      rng,
      sessionTimeoutMs: opts.sessionTimeoutMs,
      dir,
      appPrefix,
      adminUrl,
      schema,
      server,
      proxy,
      proxies: [proxy, directProxy].filter((p): p is FaultProxy => p !== undefined),
    }).catch((e) => rec.record({ k: 'err', op: 'fault', name: 'FaultError', message: String((e as Error).message) }))
  }
  await sleep(Math.max(0, faultsUntil - Date.now()))
  clearInterval(progress)

  // drain: no more faults, everything up again, producers stopped, consumers consume plainly until caught up
  log('drain: faults off, producers stopping, consumers catching up')
  await fleet.settle()
  const producers = fleet.slots.filter((s) => s.spec.role === 'producer' || s.spec.role === 'maintenance')
  for (const s of await fleet.retire(producers, 30_000)) rec.record({ k: 'stuck', op: `${s.writer} did not stop within 30 s`, ms: 30_000 })
  const consumers = fleet.slots.filter((s) => s.spec.role === 'consumer' || s.spec.role === 'transform')
  writeFileSync(path.join(dir, DRAIN_FILE), '')
  const checkConfig: CheckConfig = {
    sessionTimeoutMs: opts.sessionTimeoutMs,
    lossyTopics: all.filter((t) => t.lossy).map((t) => t.name),
    eos: opts.eos ? [{ input: eosIn.name, output: eosOut.name }] : [],
    deadLetter: opts.deadLetter ? [{ input: dlIn.name, topic: dlOut.name }] : [],
    denseOffsets: pgq,
    fencedHandlers: pgq,
    unchecked: retryTopics.map((t) => t.name),
  }
  // The drain goes on while it makes progress: a group the mix made slower than the producers (one member, slow
  // handlers, a commit per message) is behind, not losing, and catches up once the producers stop. It ends when
  // nothing is outstanding, when drainSeconds pass without the outstanding count falling (a message that never comes
  // stops it so), and at the latest after the fault phase's length plus drainSeconds.
  const drainStarted = Date.now()
  const drainLatest = drainStarted + (opts.seconds + opts.drainSeconds) * 1000
  // a long run's history takes seconds to read: poll at most half the time
  const leftNow = async () => {
    const t0 = Date.now()
    const n = await countOutstanding(dir, checkConfig)
    return { n, readMs: Date.now() - t0 }
  }
  let { n: left, readMs } = await leftNow()
  let fewest = left
  let progressAt = Date.now()
  let loggedAt = Date.now()
  while (left > 0 && Date.now() - progressAt < opts.drainSeconds * 1000 && Date.now() < drainLatest) {
    await sleep(Math.max(1000, 2 * readMs))
    ;({ n: left, readMs } = await leftNow())
    if (left < fewest) [fewest, progressAt] = [left, Date.now()]
    if (Date.now() - loggedAt >= 60_000) {
      loggedAt = Date.now()
      log(`drain: ${left} outstanding after ${((Date.now() - drainStarted) / 1000).toFixed(0)} s`)
    }
  }
  if (left > 0) rec.record({ k: 'stat', name: 'drain.incomplete', n: left })
  log(`drain: ${left === 0 ? 'caught up' : `${left} still outstanding`} after ${((Date.now() - drainStarted) / 1000).toFixed(0)} s`)
  await sleep(1500) // the last auto-commits
  for (const s of await fleet.retire(consumers, 20_000)) rec.record({ k: 'stuck', op: `${s.writer} did not stop within 20 s`, ms: 20_000 })
  for (const p of pollers) await p.stop()

  log('audit: every topic from the beginning with a fresh group')
  await audit(observer, admin, all, createRecorder(dir, 'audit'), `${runId}-audit`)
  if (server) rec.record({ k: 'stat', name: 'pg.deadlocks', n: await deadlocks(server.url) })
  await admin.disconnect()
  await fleet.killAll()
  await proxy?.close()
  await directProxy?.close()
  if (!pgq) await dropKafkaTopics(observer, all)
  server?.stop()

  const history = readHistory(dir)
  const operations: Record<string, number> = {}
  for (const e of history) {
    const key =
      e.k === 'ack'
        ? `ack:${e.via}`
        : e.k === 'abort'
          ? `abort:${e.via}`
          : e.k === 'amb'
            ? `ambiguous:${e.via}`
            : e.k === 'c'
              ? `commit:${e.src}`
              : e.k
    if (['ack', 'abort', 'amb', 'c', 'seek', 'txb', 'he'].includes(e.k)) operations[key] = (operations[key] ?? 0) + 1
  }
  const maint = history.filter((e) => e.k === 'stat' && e.name === 'maintenance.runs').reduce((n, e) => n + (e.k === 'stat' ? e.n : 0), 0)
  if (maint > 0) operations['maintenance runs'] = maint
  // the coverage table: how many members exercised each drawn option (summary's coverage section)
  for (const e of history)
    if (e.k === 'stat' && e.name.startsWith('cover.')) operations[`cover ${e.name.slice(6)}`] = (operations[`cover ${e.name.slice(6)}`] ?? 0) + 1
  const steps = history.filter((e) => e.k === 'stat' && e.name === 'clock.offset').length
  if (steps > 0) operations['clock steps seen by workers'] = steps
  const result = check(history, checkConfig)
  const phases = { faultSeconds: (faultsUntil - started) / 1000, drainSeconds: (Date.now() - drainStarted) / 1000, events: history.length }
  return { runId, dir, result, checkConfig, operations, phases, firstViolationAfter: secondsToFirstViolation(history, result) }
}

const PROGRESS_EVERY_MS = 60_000

/** A line a minute during the faults: a long run shows it is alive and how much it has recorded. */
const OUTSTANDING_COUNT = path.resolve('test/torture/outstandingCount.ts')

/** The drain's outstanding count, read in a child process so the fault proxy here keeps forwarding meanwhile. */
function countOutstanding(dir: string, config: CheckConfig): Promise<number> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['--import', 'tsx', OUTSTANDING_COUNT, dir, JSON.stringify(config)], (err, stdout) => {
      const n = Number(stdout)
      if (err || stdout === '' || !Number.isInteger(n)) reject(err ?? new Error(`outstandingCount printed ${JSON.stringify(stdout)}`))
      else resolve(n)
    }),
  )
}

function progressLine(dir: string, fleet: Fleet, injected: Map<string, number>, elapsed: number, seconds: number): string {
  const bytes = readdirSync(dir)
    .filter((n) => n.endsWith('.jsonl'))
    .reduce((n, f) => n + statSync(path.join(dir, f)).size, 0)
  const faults =
    [...injected]
      .sort()
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none'
  const respawns = fleet.slots.reduce((n, s) => n + s.incarnation, 0)
  return `${elapsed.toFixed(0)}/${seconds} s: faults ${faults}; ${fleet.live().length}/${fleet.slots.length} workers up, ${respawns} respawns; history ${(bytes / 2 ** 20).toFixed(1)} MiB`
}

/** A consumer slot's drawn options, for the run's log line. */
function describeSlot(s: SlotPlan): string {
  if (s.role !== 'consumer') return ''
  const d = s.draw
  const flags = [
    `autoCommit ${d.autoCommit ? 'on' : 'off'}`,
    ...(s.handler.startsWith('batch') ? [`autoResolve ${d.autoResolve ? 'on' : 'off'}`] : []),
    ...(d.steps.length > 0 ? [d.steps.join('>')] : []),
    ...(d.slow ? ['slow'] : []),
    ...(d.midBatch ? ['mid-batch'] : []),
    ...(s.concurrency > 1 ? [`concurrency ${s.concurrency}`] : []),
  ]
  return `${s.id} (${s.group}) ${s.handler}: ${flags.join(', ')}`
}

/**
 * One member's options that change what is committed, each drawn on its own (so runs see them alone and combined);
 * the handler kind keeps what it names: manual commits, a partial batch.
 */
function drawConsumer(rng: ReturnType<typeof createRng>, handler: Handler, slowAllowed: boolean): ConsumerDraw {
  const batch = handler.startsWith('batch')
  const drawn = batch ? rng.shuffle([...COMMIT_STEPS]).slice(0, rng.int(handler === 'batch-partial' ? 1 : 0, COMMIT_STEPS.length)) : []
  // a partial batch is not auto-resolved: without resolveOffset its fetch position never moves and, as on KafkaJS,
  // the same batch comes back until a rejoin (none in the drain: seed 20261204's g1 never drained). Appended, so
  // the draws after it (and earlier seeds' plans otherwise) stay as they were
  const steps = batch
    ? handler === 'batch-partial' && !drawn.includes('resolve')
      ? [...drawn, 'resolve' as const]
      : drawn
    : handler === 'message-manual'
      ? (['commitOffsets'] as CommitStep[])
      : []
  return {
    autoCommit: handler === 'message-manual' ? rng.chance(0.3) : rng.chance(0.8),
    // a partial batch under auto-resolve would claim the rest handled: the application's loss, not the library's
    autoResolve: handler === 'batch',
    steps,
    partial: handler === 'batch-partial',
    slow: slowAllowed && rng.chance(0.5),
    midBatch: rng.chance(0.5),
  }
}

/** Producers, a transformer, consumers of two groups with different subscriptions and handlers, maintenance. */
export function planSlots(
  opts: Options,
  rng: ReturnType<typeof createRng>,
  topics: TopicPlan[],
  { eosIn, eosOut, dlIn, dlOut }: Record<'eosIn' | 'eosOut' | 'dlIn' | 'dlOut', TopicPlan>,
  name: (s: string) => string,
  bizTable: string,
  runId: string,
  dlPlan: Pick<DeadLetterPlan, 'mode' | 'around'>,
): SlotPlan[] {
  const slots: SlotPlan[] = []
  const nProducers = opts.processes >= 6 ? 2 : 1
  // two transformers, so a stalled one has a successor that takes its partitions over
  const nTransform = opts.eos ? 2 : 0
  const nConsumers = Math.max(3, opts.processes - nProducers - nTransform)
  const produced = [...topics, ...(opts.eos ? [eosIn] : []), ...(opts.deadLetter ? [dlIn] : [])]
  for (let i = 0; i < nProducers; i++) {
    slots.push({
      role: 'producer',
      id: `p${i}`,
      topics: produced,
      ops: opts.producerOps,
      priorities: opts.priorities,
      multiPartition: opts.multiPartition,
      bizTable,
    })
  }
  for (let i = 0; i < nTransform; i++) {
    slots.push({ role: 'transform', id: `t${i}`, group: name('eos'), input: eosIn.name, output: eosOut.name, transactionalId: `${runId}-eos-${i}` })
  }
  const [a, b] = topics.map((t) => t.name)
  const cap = topics.find((t) => t.lossy)?.name
  // g1 has two thirds of the consumers (so a stalled member has successors), with different subscriptions: every
  // topic, a and b, or b only (a partition must still be consumed whoever subscribes it); g2's subscribe a and b
  const g1Subscriptions = [[a, b, ...(cap ? [cap] : [])], [a, b], [b]]
  // distinct handlers as far as there are consumers (independent picks left the CI seed without any eachBatch)
  const handlers = rng.shuffle(opts.handlers)
  const slowAllowed = opts.consumerOps.length > 0
  // with priorities a seek back to an offset the member processed passes lower-priority messages it was not given
  // yet: the position moves past them, as Kafka's seek does, so they are skipped by design, not lost
  const consumerOps = opts.priorities ? opts.consumerOps.filter((op) => op !== 'seek') : opts.consumerOps
  for (let i = 0, g1 = 0; i < nConsumers; i++) {
    const inG2 = i % 3 === 1
    const subscribe = inG2 ? [a, b] : g1Subscriptions[g1++ % g1Subscriptions.length]
    slots.push({
      role: 'consumer',
      id: `c${i}`,
      group: name(inG2 ? 'g2' : 'g1'),
      subscribe,
      handler: handlers[i % handlers.length],
      ops: consumerOps,
      concurrency: rng.int(1, 3),
      draw: drawConsumer(rng, handlers[i % handlers.length], slowAllowed),
    })
  }
  // two dead-letter members, so a stalled or killed one has a successor; no seeks: a replay dead-letters again
  const deadLetter: DeadLetterPlan = { topic: dlOut.name, maxAttempts: 3, ...dlPlan }
  for (let i = 0; opts.deadLetter && i < 2; i++) {
    const handler = deadLetter.around === 'batch' ? (rng.chance(0.5) ? 'batch-partial' : 'batch') : 'message'
    slots.push({
      role: 'consumer',
      id: `d${i}`,
      group: name('gdl'),
      subscribe: [dlIn.name],
      handler,
      deadLetter,
      ops: opts.consumerOps.filter((op) => op !== 'seek'),
      concurrency: rng.int(1, 2),
      draw: { ...drawConsumer(rng, handler, slowAllowed), steps: ['resolve'], midBatch: false },
    })
  }
  if (opts.maintenance) slots.push({ role: 'maintenance', id: 'm0' })
  return slots
}

/** The outbox ops whose isolation level sendWith refuses: tried once in a transaction that is rolled back. */
async function refusedOutboxLevels(conn: Connection, topic: string): Promise<ProducerOp[]> {
  const { Kafka } = await import('../../src/kafka.js')
  const producer = new Kafka({ logLevel: logLevel.NOTHING, pgqueue: { connectionString: conn.pgUrl, schema: conn.schema, enabled: true } }).producer()
  await producer.connect()
  const client = new pg.Client({ connectionString: conn.pgUrl })
  await client.connect()
  const refused: ProducerOp[] = []
  try {
    for (const [op, level] of [
      ['outbox-rr', 'REPEATABLE READ'],
      ['outbox-ser', 'SERIALIZABLE'],
    ] as const) {
      await client.query(`BEGIN ISOLATION LEVEL ${level}`)
      try {
        await producer.sendWith(client, { topic, messages: [{ value: 'probe' }] })
      } catch {
        refused.push(op)
      } finally {
        await client.query('ROLLBACK')
      }
    }
  } finally {
    await client.end()
    await producer.disconnect()
  }
  return refused
}

async function setUp(opts: Options, conn: Connection, topics: TopicPlan[], bizTable: string) {
  const kafka = opts.transport === 'pgqueue' ? kafkaFor({ ...conn }, 'torture-setup') : kafkaFor(conn, 'torture-setup')
  if (opts.transport === 'pgqueue') {
    // migrate the fresh schema once, here, so no worker races another to do it
    const { Kafka } = await import('../../src/kafka.js')
    const db = await new Kafka({
      logLevel: logLevel.NOTHING,
      pgqueue: { connectionString: conn.pgUrl, schema: conn.schema, enabled: true },
    }).database()
    await db.release()
  }
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({
    waitForLeaders: true,
    topics: topics.map((t) => ({
      topic: t.name,
      numPartitions: t.partitions,
      ...(t.lossy ? { configEntries: [{ name: 'retention.bytes', value: '20000' }] } : {}),
    })),
  })
  await admin.disconnect()
  if (opts.transport !== 'pgqueue') return
  const client = new pg.Client({ connectionString: conn.pgUrl })
  await client.connect()
  try {
    const topicTable = `${quoteIdent(conn.schema!)}.metadata_queue_topic`
    for (const t of topics.filter((t) => t.aggressive))
      await client.query(`UPDATE ${topicTable} SET aggressive_retention = true WHERE topic_name = $1`, [t.name])
    for (const t of topics.filter((t) => t.lossy))
      await client.query(`UPDATE ${topicTable} SET max_rows_per_topic = 300 WHERE topic_name = $1`, [t.name])
    await client.query(`CREATE TABLE ${bizTable} (id text PRIMARY KEY, level text NOT NULL)`)
  } finally {
    await client.end()
  }
}

/** Every group's committed offsets, polled: commits the consumers did not report are checked too. */
function pollOffsets(admin: ReturnType<Kafka['admin']>, groups: Map<string, Set<string>>, rec: Recorder) {
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      for (const [groupId, topics] of groups) {
        try {
          for (const t of await admin.fetchOffsets({ groupId, topics: [...topics] })) {
            for (const p of t.partitions) {
              if (BigInt(p.offset) >= 0n) rec.record({ k: 'c', g: groupId, topic: t.topic, partition: p.partition, offset: p.offset, src: 'poll' })
            }
          }
        } catch {
          // server restarting
        }
      }
      await sleep(700)
    }
  })()
  return { stop: async () => void ((stopped = true), await loop) }
}

/** Statements of the run's clients active for longer than the bound (a hang no client reports). */
function pollStatements(url: string, appPrefix: string, boundMs: number, rec: Recorder) {
  let stopped = false
  const told = new Set<string>()
  const loop = (async () => {
    while (!stopped) {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
      client.on('error', () => undefined)
      try {
        await client.connect()
        const { rows } = await client.query<{ pid: number; app: string; ms: number; query: string; since: string }>(
          `SELECT pid, application_name AS app, (extract(epoch FROM now() - query_start) * 1000)::int AS ms, query, query_start::text AS since
             FROM pg_stat_activity WHERE application_name LIKE $1 || '%' AND state = 'active' AND now() - query_start > $2 * interval '1 millisecond'`,
          [appPrefix, boundMs],
        )
        for (const r of rows) {
          if (told.has(`${r.pid}@${r.since}`)) continue
          told.add(`${r.pid}@${r.since}`)
          rec.record({ k: 'stuck', op: `statement of ${r.app.slice(appPrefix.length)}: ${r.query.replace(/\s+/g, ' ').slice(0, 160)}`, ms: r.ms })
        }
      } catch {
        // server restarting
      } finally {
        await client.end().catch(() => undefined)
      }
      await sleep(2000)
    }
  })()
  return { stop: async () => void ((stopped = true), await loop) }
}

/** Reads every topic from the beginning with a fresh group until each partition's high watermark (or 5 s of quiet). */
async function audit(kafka: Kafka, admin: ReturnType<Kafka['admin']>, topics: TopicPlan[], rec: Recorder, groupId: string) {
  const high = new Map<string, bigint>()
  for (const t of topics) for (const p of await admin.fetchTopicOffsets(t.name)) high.set(`${t.name}/${p.partition}`, BigInt(p.high))
  const seen = new Map<string, bigint>()
  let last = Date.now()
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 300 })
  await consumer.connect()
  for (const t of topics) await consumer.subscribe({ topic: t.name, fromBeginning: true })
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      const origin = originOf(message.headers)
      rec.record({
        k: 'a',
        topic,
        partition,
        offset: message.offset,
        value: String(message.value),
        ...(origin ? { origin: `${origin.topic}/${origin.partition}@${origin.offset}` } : {}),
      })
      seen.set(`${topic}/${partition}`, BigInt(message.offset) + 1n)
      last = Date.now()
    },
  })
  const deadline = Date.now() + 60_000
  const done = () => [...high].every(([tp, h]) => (seen.get(tp) ?? 0n) >= h)
  while (!done() && Date.now() - last < 5000 && Date.now() < deadline) await sleep(200)
  await consumer.disconnect()
}

async function deadlocks(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ n: number }>('SELECT coalesce(sum(deadlocks), 0)::int AS n FROM pg_stat_database')
    return rows[0].n
  } finally {
    await client.end()
  }
}

async function dropKafkaTopics(kafka: Kafka, topics: TopicPlan[]) {
  const admin = kafka.admin()
  await admin.connect()
  await admin.deleteTopics({ topics: topics.map((t) => t.name) }).catch(() => undefined)
  await admin.disconnect()
}
