// consume: one group (one member, its own process) drains the topic, with eachMessage and with eachBatch.
// fanout: three groups drain the same stored messages at the same time.
import { prefill } from '../lib/produce.js'
import { createTopic, highWatermarks } from '../lib/target.js'
import type { Row, RunContext } from '../lib/types.js'
import { runMembers } from '../lib/workers.js'
import type { WorkerConfig } from '../worker.js'

/** The KafkaJS default (5 s) only matters while a member is paused or idle; 100 ms lets both start promptly. */
const MAX_WAIT_MS = 100

export function member(ctx: RunContext, topic: string, groupId: string, mode: WorkerConfig['mode']): WorkerConfig {
  return { target: ctx.target, topic, groupId, mode, latency: false, gated: true, maxWaitTimeInMs: MAX_WAIT_MS }
}

export async function consumeScenario(ctx: RunContext): Promise<Row[]> {
  const topic = `bench-consume-${ctx.runId}`
  await createTopic(ctx.target, topic, 1)
  await prefill(ctx.target, topic, ctx.sizes.consume)
  const ends = await highWatermarks(ctx.target, topic)
  const rows: Row[] = []
  for (const mode of ['eachBatch', 'eachMessage'] as const) {
    const [g] = await runMembers([member(ctx, topic, `bench-consume-${mode}-${ctx.runId}`, mode)], topic, 1, ends)
    ctx.log(`consume ${mode}: ${Math.round(g!.perSecond)} msg/s (${g!.count} deliveries)`)
    rows.push({
      key: `consume.${mode}`,
      scenario: 'consume',
      label: `consume, one group, ${mode}`,
      unit: 'msg/s',
      value: g!.perSecond,
      detail: { messages: ctx.sizes.consume, deliveries: g!.count, ms: Math.round(g!.lastAt - g!.firstAt), rssPeakMB: g!.rssPeak / 2 ** 20 },
    })
  }
  return rows
}

export async function fanoutScenario(ctx: RunContext): Promise<Row[]> {
  const topic = `bench-fanout-${ctx.runId}`
  await createTopic(ctx.target, topic, 1)
  await prefill(ctx.target, topic, ctx.sizes.fanout)
  const ends = await highWatermarks(ctx.target, topic)
  const groups = [1, 2, 3].map((i) => member(ctx, topic, `bench-fanout-${i}-${ctx.runId}`, 'eachBatch'))
  const results = await runMembers(groups, topic, 1, ends)
  const firstAt = Math.min(...results.map((r) => r.firstAt))
  const lastAt = Math.max(...results.map((r) => r.lastAt))
  const deliveries = results.reduce((n, r) => n + r.count - r.duplicates, 0)
  const perSecond = deliveries / ((lastAt - firstAt) / 1000)
  ctx.log(`fan-out: ${Math.round(perSecond)} deliveries/s (${results.map((r) => Math.round(r.perSecond)).join(' + ')} per group)`)
  return [
    {
      key: 'fanout.deliveries',
      scenario: 'fanout',
      label: 'fan-out, three groups (eachBatch)',
      unit: 'deliveries/s',
      value: perSecond,
      detail: { messages: ctx.sizes.fanout, deliveries, ms: Math.round(lastAt - firstAt), perGroup: results.map((r) => Math.round(r.perSecond)) },
    },
  ]
}

/** parallel: 8 partitions, 4 members (processes) in one group, eachMessage. */
export async function parallelScenario(ctx: RunContext): Promise<Row[]> {
  const topic = `bench-parallel-${ctx.runId}`
  await createTopic(ctx.target, topic, 8)
  await prefill(ctx.target, topic, ctx.sizes.parallel)
  const ends = await highWatermarks(ctx.target, topic)
  const groupId = `bench-parallel-${ctx.runId}`
  const [g] = await runMembers(
    [1, 2, 3, 4].map(() => member(ctx, topic, groupId, 'eachMessage')),
    topic,
    8,
    ends,
  )
  ctx.log(`parallel: ${Math.round(g!.perSecond)} msg/s, ${g!.duplicates} duplicates (${g!.members.map((m) => m.count).join(' + ')})`)
  return [
    {
      key: 'parallel.messages',
      scenario: 'parallel',
      label: 'parallel, 8 partitions, 4 member processes (eachMessage)',
      unit: 'msg/s',
      value: g!.perSecond,
      note: `${g!.duplicates} duplicates`,
      detail: {
        messages: ctx.sizes.parallel,
        duplicates: g!.duplicates,
        perMember: g!.members.map((m) => m.count),
        ms: Math.round(g!.lastAt - g!.firstAt),
      },
    },
  ]
}
