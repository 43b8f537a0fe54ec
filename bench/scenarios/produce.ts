// produce: 256-byte incompressible values, batches of 1, 100 and 1,000 messages, acks = all; batches of 100 and
// 1,000 once awaited one at a time and once with 4 sends in flight (an app calling send concurrently: pgQueue
// writes the sends queued behind one statement to the same partition as the next statement).
import { MESSAGE_BYTES, produce, withProducer } from '../lib/produce.js'
import { createTopic } from '../lib/target.js'
import type { Row, RunContext } from '../lib/types.js'

export async function produceScenario(ctx: RunContext): Promise<Row[]> {
  const rows: Row[] = []
  const runs = [
    [1, ctx.sizes.produceBatch1InFlight],
    [100, 1],
    [1000, 1],
    [100, 4],
    [1000, 4],
  ]
  for (const [batch, inFlight] of runs) {
    const topic = `bench-produce-${batch}-${inFlight}-${ctx.runId}`
    await createTopic(ctx.target, topic, 1)
    const total = batch === 1 ? ctx.sizes.produceBatch1 : ctx.sizes.produce
    const r = await withProducer(ctx.target, async (p) => {
      await produce(p, topic, Math.min(total, 2000), Math.min(batch, 100), 4) // warm-up: connections, statements
      return produce(p, topic, total, batch, inFlight)
    })
    ctx.log(`produce batch ${batch}: ${Math.round(r.perSecond)} msg/s, ${r.mbPerSecond.toFixed(1)} MB/s (${total} messages, ${inFlight} in flight)`)
    rows.push({
      key: batch === 1 || inFlight === 1 ? `produce.batch${batch}` : `produce.batch${batch}.inFlight${inFlight}`,
      scenario: 'produce',
      label: `produce ${MESSAGE_BYTES} B, batch ${batch.toLocaleString('en-US')}${inFlight > 1 ? ` (${inFlight} sends in flight)` : ''}`,
      unit: 'msg/s',
      value: r.perSecond,
      note: `${r.mbPerSecond.toFixed(1)} MB/s`,
      detail: { messages: total, batch, inFlight, ms: Math.round(r.ms), mbPerSecond: r.mbPerSecond },
    })
  }
  return rows
}
