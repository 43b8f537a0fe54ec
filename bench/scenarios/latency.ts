// latency: one producer sends single messages at a fixed rate; a consumer in its own process (eachMessage,
// default settings) measures send-call-to-handler time from the send time written into each value.
import { produceAtRate, withProducer } from '../lib/produce.js'
import { createTopic, highWatermarks } from '../lib/target.js'
import type { Row, RunContext } from '../lib/types.js'
import { runMembers } from '../lib/workers.js'

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

export interface Latencies {
  p50: number
  p99: number
  max: number
  detail: Record<string, number>
}

/** Send-call-to-handler latencies of single messages sent at `rate` for `seconds` to a fresh 1-partition topic. */
export async function measureLatency(ctx: RunContext, topic: string, rate: number, seconds: number): Promise<Latencies> {
  await createTopic(ctx.target, topic, 1)
  const [g] = await withProducer(ctx.target, async (producer) => {
    await producer.send({ topic, messages: [{ value: Buffer.alloc(8) }] }) // connect and prepare before the clock starts
    return runMembers(
      [{ target: ctx.target, topic, groupId: `bench-latency-${ctx.runId}`, mode: 'eachMessage', latency: true, gated: false }],
      topic,
      1,
      async () => {
        await produceAtRate(producer, topic, rate, seconds)
        return highWatermarks(ctx.target, topic)
      },
    )
  })
  const samples = g!.members.flatMap((m) => m.latencies).sort((a, b) => a - b)
  const detail = { rate, seconds, samples: samples.length, p90: percentile(samples, 90), p999: percentile(samples, 99.9) }
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), max: samples[samples.length - 1] ?? NaN, detail }
}

export async function latencyScenario(ctx: RunContext): Promise<Row[]> {
  const { latencyRate: rate, latencySeconds: seconds } = ctx.sizes
  const { p50, p99, max, detail } = await measureLatency(ctx, `bench-latency-${ctx.runId}`, rate, seconds)
  ctx.log(`latency at ${rate} msg/s: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${max.toFixed(1)} ms (${detail.samples} samples)`)
  const label = (what: string) => `latency at ${rate.toLocaleString('en-US')} msg/s, ${what}`
  return [
    { key: 'latency.p50', scenario: 'latency', label: label('p50'), unit: 'ms', value: p50, detail },
    { key: 'latency.p99', scenario: 'latency', label: label('p99'), unit: 'ms', value: p99 },
    { key: 'latency.max', scenario: 'latency', label: label('max'), unit: 'ms', value: max },
  ]
}
