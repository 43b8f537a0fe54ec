// scaling: how the figures change with partitions, groups, producer processes, backlog size and background load
// (issue 20's scaling table). Every step runs on both backends unless it says otherwise.
// - partitions: one producer sends batches of 1,000 spread round robin over the partitions (each send writes one
//   statement per partition), then one member drains them (eachBatch). From 1,024 partitions on, 20 messages per
//   partition (a send of 1,000 is then 1,000 one-row statements on pgQueue: the full count would take minutes).
// - groups: that many groups (one member process each) drain the same stored messages of a 1-partition topic at once.
// - producer processes: that many processes (bench/producer.ts) send batches of 100 at once, one send at a time each,
//   to one partition or to 16 (each send to one partition, the next send to the next: Kafka's sticky batches).
// - backlog: that many messages stored, then one member drains them (eachBatch): drain rate and the time from its
//   release to its first delivery (the first fetch at the head of the backlog).
// - latency under load: the latency scenario's 1,000 msg/s single sends, while another process sends batches of
//   1,000 at 10 per second to another topic; on pgQueue once more with that process also running maintenance
//   (vacuum included) back to back.
// - churn (pgQueue): a producer process (batches of 100 at 50 per second, maintenance back to back) and a
//   consuming group run together on a topic with 10 s retention; then the dead tuples left in the message, offset
//   and lease tables and the rows still stored.
// - server cost (pgQueue): the consumer's PostgreSQL CPU per message at 500 msg/s with 5, 73 and 200 time partitions
//   and 1, 8 and 64 topic partitions, and 100 idle groups' CPU per second (bench/scenarios/serverCost.ts).
import { churn, relationSizes } from '../lib/pgstats.js'
import { MESSAGE_BYTES, prefill, produce, withProducer } from '../lib/produce.js'
import { startProducers } from '../lib/producers.js'
import { createTopic, highWatermarks, makeKafka, type Target } from '../lib/target.js'
import type { Row, RunContext } from '../lib/types.js'
import { runMembers } from '../lib/workers.js'
import { member } from './consume.js'
import { measureLatency } from './latency.js'
import { serverCostSteps } from './serverCost.js'

const BATCH = 1000
const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`

/** Topics with a thousand partitions, deleted once the scenario is over (a shared broker keeps no idle ones). */
const large: string[] = []

async function partitionSteps(ctx: RunContext): Promise<Row[]> {
  const rows: Row[] = []
  for (const partitions of ctx.sizes.scalingPartitions) {
    const total = partitions >= 1024 ? Math.min(ctx.sizes.scalingMessages, 20 * partitions) : ctx.sizes.scalingMessages
    const topic = `bench-scaling-p${partitions}-${ctx.runId}`
    await createTopic(ctx.target, topic, partitions)
    const r = await withProducer(ctx.target, async (p) => {
      await produce(p, topic, Math.min(total, 2000), Math.min(BATCH, 100), 4, partitions) // warm-up
      return produce(p, topic, total, BATCH, 1, partitions)
    })
    ctx.log(`scaling produce, ${partitions} partitions: ${Math.round(r.perSecond)} msg/s`)
    rows.push({
      key: `scaling.produce.p${partitions}`,
      scenario: 'scaling',
      label: `scaling: produce ${MESSAGE_BYTES} B, batch 1,000 over ${plural(partitions, 'partition')}`,
      unit: 'msg/s',
      value: r.perSecond,
      detail: { messages: total, partitions, ms: Math.round(r.ms) },
    })
    const ends = await highWatermarks(ctx.target, topic)
    const [g] = await runMembers([member(ctx, topic, `bench-scaling-p${partitions}-${ctx.runId}`, 'eachBatch')], topic, partitions, ends)
    ctx.log(`scaling consume, ${partitions} partitions: ${Math.round(g!.perSecond)} msg/s`)
    rows.push({
      key: `scaling.consume.p${partitions}`,
      scenario: 'scaling',
      label: `scaling: consume ${plural(partitions, 'partition')}, one member (eachBatch)`,
      unit: 'msg/s',
      value: g!.perSecond,
      detail: { messages: total + Math.min(total, 2000), partitions, ms: Math.round(g!.lastAt - g!.firstAt) },
    })
    if (partitions >= 1024) large.push(topic)
  }
  return rows
}

async function deleteTopics(target: Target, topics: string[]): Promise<void> {
  if (topics.length === 0) return
  const admin = makeKafka(target, 'bench-admin').admin()
  await admin.connect()
  try {
    await admin.deleteTopics({ topics: topics.splice(0) })
  } finally {
    await admin.disconnect()
  }
}

/** Connections a pgQueue consumer process may hold: its pool (default 8) and the LISTEN connection. */
const CONNECTIONS_PER_MEMBER = 9
/** The pool of each member when that many would not fit: one connection fetches, one commits (docs/performance.md). */
const SMALL_POOL = 2

/** pgQueue: the connections still free on the server (max_connections less those open), to stay clear of the limit. */
async function freeConnections(ctx: RunContext): Promise<number> {
  if (!ctx.pg) return Infinity
  const res = await ctx.pg.pool.query<{ free: number }>(
    `SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int - count(*)::int AS free FROM pg_stat_activity`,
  )
  return res.rows[0]!.free
}

async function groupSteps(ctx: RunContext): Promise<Row[]> {
  const rows: Row[] = []
  const total = ctx.sizes.scalingMessages
  const topic = `bench-scaling-fanout-${ctx.runId}`
  await createTopic(ctx.target, topic, 1)
  await prefill(ctx.target, topic, total)
  const ends = await highWatermarks(ctx.target, topic)
  for (const groups of ctx.sizes.scalingGroups) {
    const free = await freeConnections(ctx)
    // each member process holds its own connections: with many groups each gets a small pool (what the docs advise for
    // many consumer processes) rather than taking other clients' slots; skipped when even those would not fit
    const small = groups * CONNECTIONS_PER_MEMBER + 10 > free
    const needs = groups * (small ? SMALL_POOL + 1 : CONNECTIONS_PER_MEMBER)
    if (needs + 10 > free) {
      ctx.log(`scaling fan-out, ${groups} groups: skipped, needs up to ${needs} connections and the server has ${free} free`)
      continue
    }
    const target =
      small && ctx.target.backend === 'pgqueue' ? { ...ctx.target, options: { ...ctx.target.options, pool: { max: SMALL_POOL } } } : ctx.target
    const configs = Array.from({ length: groups }, (_, i) => ({
      ...member(ctx, topic, `bench-scaling-g${groups}-${i}-${ctx.runId}`, 'eachBatch'),
      target,
    }))
    const results = await runMembers(configs, topic, 1, ends)
    const firstAt = Math.min(...results.map((r) => r.firstAt))
    const lastAt = Math.max(...results.map((r) => r.lastAt))
    const deliveries = results.reduce((n, r) => n + r.count - r.duplicates, 0)
    const perSecond = deliveries / ((lastAt - firstAt) / 1000)
    ctx.log(`scaling fan-out, ${groups} groups: ${Math.round(perSecond)} deliveries/s`)
    rows.push({
      key: `scaling.fanout.g${groups}`,
      scenario: 'scaling',
      label: `scaling: fan-out to ${plural(groups, 'group')} (eachBatch)`,
      unit: 'deliveries/s',
      value: perSecond,
      ...(small ? { note: `pool.max ${SMALL_POOL} per member` } : {}),
      detail: { messages: total, groups, deliveries, ms: Math.round(lastAt - firstAt), poolMax: small ? SMALL_POOL : undefined },
    })
  }
  return rows
}

async function producerSteps(ctx: RunContext): Promise<Row[]> {
  const rows: Row[] = []
  const total = ctx.sizes.scalingMessages
  for (const partitions of [1, 16]) {
    for (const processes of ctx.sizes.scalingProducers) {
      const topic = `bench-scaling-pp${processes}-p${partitions}-${ctx.runId}`
      await createTopic(ctx.target, topic, partitions)
      const each = Math.ceil(total / processes)
      const producers = await startProducers(
        Array.from({ length: processes }, (_, index) => ({ target: ctx.target, topic, partitions, index, batch: 100, total: each })),
      )
      const reports = await producers.done
      const sent = reports.reduce((n, r) => n + r.messages, 0)
      const ms = Math.max(...reports.map((r) => r.lastAt)) - Math.min(...reports.map((r) => r.firstAt))
      const perSecond = sent / (ms / 1000)
      ctx.log(`scaling producers, ${processes} processes, ${partitions} partitions: ${Math.round(perSecond)} msg/s`)
      rows.push({
        key: `scaling.producers.n${processes}.p${partitions}`,
        scenario: 'scaling',
        label: `scaling: ${processes} producer process${processes === 1 ? '' : 'es'}, batch 100, ${plural(partitions, 'partition')}`,
        unit: 'msg/s',
        value: perSecond,
        detail: {
          messages: sent,
          processes,
          partitions,
          ms: Math.round(ms),
          cpuUsPerMessage: (reports.reduce((n, r) => n + r.cpuMs, 0) * 1000) / sent,
        },
      })
    }
  }
  return rows
}

async function backlogSteps(ctx: RunContext): Promise<Row[]> {
  const rows: Row[] = []
  for (const backlog of ctx.sizes.scalingBacklogs) {
    const topic = `bench-scaling-backlog${backlog}-${ctx.runId}`
    await createTopic(ctx.target, topic, 1)
    const filling = Date.now()
    await prefill(ctx.target, topic, backlog)
    ctx.log(`scaling backlog ${backlog}: stored in ${((Date.now() - filling) / 1000).toFixed(0)} s`)
    const ends = await highWatermarks(ctx.target, topic)
    const [g] = await runMembers([member(ctx, topic, `bench-scaling-backlog${backlog}-${ctx.runId}`, 'eachBatch')], topic, 1, ends, {
      drainTimeoutMs: 1_800_000,
    })
    const firstFetchMs = g!.firstAt - g!.goAt
    ctx.log(`scaling backlog ${backlog}: drained at ${Math.round(g!.perSecond)} msg/s, first delivery ${firstFetchMs.toFixed(0)} ms after release`)
    const what = `backlog of ${backlog.toLocaleString('en-US')}`
    rows.push(
      {
        key: `scaling.backlog${backlog}.consume`,
        scenario: 'scaling',
        label: `scaling: consume a ${what}, one member (eachBatch)`,
        unit: 'msg/s',
        value: g!.perSecond,
        detail: { messages: backlog, ms: Math.round(g!.lastAt - g!.firstAt) },
      },
      {
        key: `scaling.backlog${backlog}.firstFetch`,
        scenario: 'scaling',
        label: `scaling: ${what}, release to first delivery`,
        unit: 'ms',
        value: firstFetchMs,
      },
    )
  }
  return rows
}

async function latencyUnderLoad(ctx: RunContext): Promise<Row[]> {
  const rows: Row[] = []
  const rate = ctx.sizes.latencyRate
  // beside the batch producer alone, then (pgQueue) with maintenance too: what each adds to the tail
  for (const maintenance of ctx.backend === 'pgqueue' ? [false, true] : [false]) {
    const what = maintenance ? 'a batch producer and maintenance' : 'a batch producer'
    const name = maintenance ? 'loadedLatency' : 'batchLatency'
    const background = `bench-scaling-${name}-load-${ctx.runId}`
    await createTopic(ctx.target, background, 1)
    const load = await startProducers([
      { target: ctx.target, topic: background, partitions: 1, index: 0, batch: BATCH, sendsPerSecond: 10, maintenance },
    ])
    let l: Awaited<ReturnType<typeof measureLatency>>
    try {
      l = await measureLatency(ctx, `bench-scaling-${name}-${ctx.runId}`, rate, ctx.sizes.latencySeconds)
    } finally {
      load.stop()
    }
    const [bg] = await load.done
    const beside = { backgroundMsgPerSecond: bg!.messages / ((bg!.lastAt - bg!.firstAt) / 1000), maintenanceRuns: bg!.maintenanceRuns }
    ctx.log(
      `scaling latency at ${rate} msg/s beside ${what} (${Math.round(beside.backgroundMsgPerSecond)} msg/s, ${beside.maintenanceRuns ?? 0} maintenance runs): p50 ${l.p50.toFixed(2)} ms, p99 ${l.p99.toFixed(2)} ms`,
    )
    const label = (q: string) => `scaling: latency at ${rate.toLocaleString('en-US')} msg/s beside ${what}, ${q}`
    rows.push(
      { key: `scaling.${name}.p50`, scenario: 'scaling', label: label('p50'), unit: 'ms', value: l.p50, detail: { ...l.detail, ...beside } },
      { key: `scaling.${name}.p99`, scenario: 'scaling', label: label('p99'), unit: 'ms', value: l.p99 },
      { key: `scaling.${name}.max`, scenario: 'scaling', label: label('max'), unit: 'ms', value: l.max },
    )
  }
  return rows
}

async function churnStep(ctx: RunContext): Promise<Row[]> {
  const seconds = ctx.sizes.scalingChurnSeconds
  if (!ctx.pg || seconds === 0) return []
  const topic = `bench-scaling-churn-${ctx.runId}`
  const admin = makeKafka(ctx.target, 'bench-admin').admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'retention.ms', value: '10000' }] }] })
  await admin.disconnect()
  const before = await churn(ctx.pg.pool, ctx.pg.schema)
  let sent = 0
  // once a minute: dead tuples and what the schema stores, to show whether either grows with the churn's length
  const samples: { seconds: number; deadTuples: number; messageRows: number; messageBytes: number }[] = []
  const pg = ctx.pg
  const sample = async (at: number) => {
    const [c, sizes] = await Promise.all([churn(pg.pool, pg.schema), relationSizes(pg.pool, pg.schema)])
    const m = sizes.find((x) => x.table === 'message')
    samples.push({ seconds: at, deadTuples: c.deadTuples, messageRows: m?.rows ?? 0, messageBytes: (m?.tableBytes ?? 0) + (m?.indexBytes ?? 0) })
    ctx.log(
      `scaling churn at ${at} s: ${c.deadTuples} dead tuples, ${m?.rows ?? 0} message rows, ${Math.round(((m?.tableBytes ?? 0) + (m?.indexBytes ?? 0)) / 1024)} KiB`,
    )
  }
  await runMembers([{ ...member(ctx, topic, `bench-scaling-churn-${ctx.runId}`, 'eachBatch'), gated: false }], topic, 1, async () => {
    const producers = await startProducers([
      { target: ctx.target, topic, partitions: 1, index: 0, batch: 100, sendsPerSecond: 50, maintenance: true },
    ])
    for (let at = 60; at < seconds; at += 60) {
      await new Promise((r) => setTimeout(r, 60_000))
      await sample(at)
    }
    await new Promise((r) => setTimeout(r, (seconds % 60 || 60) * 1000))
    producers.stop()
    sent = (await producers.done)[0]!.messages
    return highWatermarks(ctx.target, topic)
  })
  await new Promise((r) => setTimeout(r, 1500)) // the sessions' statistics are flushed
  const after = await churn(ctx.pg.pool, ctx.pg.schema)
  const message = (await relationSizes(ctx.pg.pool, ctx.pg.schema)).find((s) => s.table === 'message')
  // n_dead_tup as left at the end (vacuum resets it: a delta can be negative), and the rows the churn deleted or updated
  const churned = after.updatedOrDeleted - before.updatedOrDeleted
  ctx.log(
    `scaling churn: ${sent} messages in ${seconds} s, ${churned} rows deleted or updated, ${after.deadTuples} dead tuples left (n_dead_tup), ${message?.rows ?? 0} message rows stored in the schema`,
  )
  return [
    {
      key: 'scaling.churn.deadTuples',
      scenario: 'scaling',
      label: `scaling: dead tuples left after ${seconds} s of produce + consume with maintenance (10 s retention)`,
      unit: 'tuples',
      value: after.deadTuples,
      note: `${sent.toLocaleString('en-US')} messages churned, ${churned.toLocaleString('en-US')} rows deleted or updated`,
      detail: { seconds, sent, churned, before, after, messageRows: message?.rows, messageTableBytes: message?.tableBytes, samples },
    },
  ]
}

export async function scalingScenario(ctx: RunContext): Promise<Row[]> {
  const rows: Row[] = []
  const steps = {
    latency: latencyUnderLoad,
    partitions: partitionSteps,
    groups: groupSteps,
    producers: producerSteps,
    backlog: backlogSteps,
    churn: churnStep,
    serverCost: (c: RunContext) => serverCostSteps(c, c.sizes.scalingServerCost === 'one'),
  }
  // BENCH_SCALING_STEPS=producers,backlog runs only those steps (default: all, in this order)
  const only = process.env.BENCH_SCALING_STEPS?.split(',').map((s) => s.trim())
  try {
    for (const [name, step] of Object.entries(steps)) if (!only || only.includes(name)) rows.push(...(await step(ctx)))
  } finally {
    if (ctx.backend === 'kafka') await deleteTopics(ctx.target, large)
    else large.length = 0
  }
  return rows
}
