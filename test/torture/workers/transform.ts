// Consume-transform-produce: each batch of the input topic becomes one transaction that writes one output per input
// message (its value names the input's partition and offset) and commits the group's offsets with sendOffsets.
// Exactly-once means: every input offset has exactly one output, whatever is killed or stalled when.
import type { EachBatchPayload } from 'kafkajs'
import { eosOutputValue } from '../checker.js'
import type { TransformSpec } from '../spec.js'
import { groupMember, sleep, startWorker } from './common.js'

const w = startWorker<TransformSpec>()
const { spec, rng, rec, kafka } = w
const g = spec.group
const producer = kafka.producer({ transactionalId: spec.transactionalId, idempotent: true, maxInFlightRequests: 1, retry: { retries: 3 } })
const consumer = groupMember(w, g)
let handlerId = 0
let txns = 0

async function eachBatch({ batch }: EachBatchPayload) {
  const { topic, partition } = batch
  const h = handlerId++
  rec.record({ k: 'he', g, topic, partition, h })
  const id = `e${txns++}`
  const outputs = batch.messages.map((m) => ({ key: m.key, value: eosOutputValue(topic, partition, m.offset) }))
  const values = outputs.map((o) => o.value)
  const next = (BigInt(batch.lastOffset()) + 1n).toString()
  rec.record({ k: 'txb', id, via: 'eos', values })
  let tx: Awaited<ReturnType<typeof producer.transaction>> | undefined
  try {
    // inside the try: a failed begin ends the handler too (unrecorded, the checker saw it running on, overlapped)
    tx = await w.track('eos.begin', () => producer.transaction())
    for (const m of batch.messages) rec.record({ k: 'd', g, topic, partition, offset: m.offset, value: String(m.value) })
    await w.track('eos.send', () => tx!.send({ topic: spec.output, messages: outputs }))
    await sleep(rng.int(0, 30)) // the transform's own work: a stall may land inside the transaction
    await w.track('eos.sendOffsets', () => tx!.sendOffsets({ consumerGroupId: g, topics: [{ topic, partitions: [{ partition, offset: next }] }] }))
  } catch (e) {
    await tx?.abort().catch(() => undefined)
    rec.record({ k: 'abort', via: 'eos', values, reason: 'its transaction failed before COMMIT' })
    rec.record({ k: 'hl', h })
    throw e
  }
  // processed once the outputs and offsets are in the transaction; a failed COMMIT undoes both together
  for (const m of batch.messages) rec.record({ k: 'x', g, topic, partition, offset: m.offset })
  rec.record({ k: 'txc', id })
  try {
    await w.track('eos.commit', () => tx!.commit())
    for (const value of values) rec.record({ k: 'ack', via: 'eos', topic: spec.output, value })
    rec.record({ k: 'c', g, topic, partition, offset: next, src: 'sendOffsets' })
  } catch (e) {
    rec.record({ k: 'amb', via: 'eos', values, error: String((e as Error).message) })
    throw e
  } finally {
    rec.record({ k: 'hl', h })
  }
}

async function main() {
  w.onStop(() => consumer.disconnect().then(() => producer.disconnect()))
  await w.track('connect', () => Promise.all([producer.connect(), consumer.connect()]))
  await w.track('subscribe', () => consumer.subscribe({ topic: spec.input, fromBeginning: true }))
  rec.record({ k: 'sub', g, topics: [spec.input] })
  await w.track('run', () => consumer.run({ autoCommit: false, eachBatch }))
  w.ready()
}

main().catch((e) => {
  w.recordError('main', e)
  process.exit(1)
})
