// scaling: how throughput changes with the number of partitions and of groups (issue 20's scaling table, the subset
// that runs in minutes). Per partition count: one producer sends batches of 1,000 spread round robin over the
// partitions (each send writes one statement per partition), then one member drains them (eachBatch). Per group
// count: that many groups (one member process each) drain the same stored messages of a 1-partition topic at once.
import { MESSAGE_BYTES, prefill, produce, withProducer } from '../lib/produce.js'
import { createTopic, highWatermarks } from '../lib/target.js'
import type { Row, RunContext } from '../lib/types.js'
import { runMembers } from '../lib/workers.js'
import { member } from './consume.js'

const BATCH = 1000

export async function scalingScenario(ctx: RunContext): Promise<Row[]> {
  const total = ctx.sizes.scalingMessages
  const rows: Row[] = []
  for (const partitions of ctx.sizes.scalingPartitions) {
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
      label: `scaling: produce ${MESSAGE_BYTES} B, batch 1,000 over ${partitions} partition${partitions > 1 ? 's' : ''}`,
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
      label: `scaling: consume ${partitions} partition${partitions > 1 ? 's' : ''}, one member (eachBatch)`,
      unit: 'msg/s',
      value: g!.perSecond,
      detail: { messages: total + Math.min(total, 2000), partitions, ms: Math.round(g!.lastAt - g!.firstAt) },
    })
  }
  const topic = `bench-scaling-fanout-${ctx.runId}`
  await createTopic(ctx.target, topic, 1)
  await prefill(ctx.target, topic, total)
  const ends = await highWatermarks(ctx.target, topic)
  for (const groups of ctx.sizes.scalingGroups) {
    const configs = Array.from({ length: groups }, (_, i) => member(ctx, topic, `bench-scaling-g${groups}-${i}-${ctx.runId}`, 'eachBatch'))
    const results = await runMembers(configs, topic, 1, ends)
    const firstAt = Math.min(...results.map((r) => r.firstAt))
    const lastAt = Math.max(...results.map((r) => r.lastAt))
    const deliveries = results.reduce((n, r) => n + r.count - r.duplicates, 0)
    const perSecond = deliveries / ((lastAt - firstAt) / 1000)
    ctx.log(`scaling fan-out, ${groups} groups: ${Math.round(perSecond)} deliveries/s`)
    rows.push({
      key: `scaling.fanout.g${groups}`,
      scenario: 'scaling',
      label: `scaling: fan-out to ${groups} group${groups > 1 ? 's' : ''} (eachBatch)`,
      unit: 'deliveries/s',
      value: perSecond,
      detail: { messages: total, groups, deliveries, ms: Math.round(lastAt - firstAt) },
    })
  }
  return rows
}
