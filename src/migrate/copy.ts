// Copies one topic's planned ranges: reads the source in offset order, sends each batch to the same partition of
// the destination with key, value, headers and timestamp, records where it landed (offset runs, checksum) and
// saves the state after every acknowledged batch. A batch acknowledged but not yet saved when the run died is
// found on resume (the destination's high watermark is past what the state expects) and accounted, not resent.
import type { KafkaMessage, Producer } from 'kafkajs'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { chain } from './checksum.js'
import { watermarks, type Endpoint } from './endpoints.js'
import { record } from './offsetMap.js'
import { readRanges, type Range } from './reader.js'
import type { PartitionState, TopicState } from './state.js'

/** messages per send: well under Kafka's default 1 MB request for small messages, one round trip for pgQueue */
const SEND_BATCH = 500

export interface CopyHooks {
  /** after every acknowledged batch */
  saved(): Promise<void>
  progress(partition: number, messages: number): void
}

function account(p: PartitionState, m: KafkaMessage, destination: number): void {
  record(p.runs, Number(m.offset), destination)
  p.checksum = chain(p.checksum, { key: m.key, value: m.value, headers: m.headers, timestamp: m.timestamp })
  p.copied++
  p.sourceNext = Number(m.offset) + 1
  p.destinationNext = destination + 1
}

async function sendBatch(producer: Producer, topic: string, p: PartitionState, messages: KafkaMessage[]): Promise<void> {
  const [meta] = await producer.send({
    topic,
    acks: -1,
    messages: messages.map((m) => ({ partition: p.partition, key: m.key, value: m.value, headers: m.headers, timestamp: m.timestamp })),
  })
  const base = Number(meta?.baseOffset)
  if (base !== p.destinationNext) {
    throw new KafkaJSNonRetriableError(
      `${topic}: partition ${p.partition}: the destination put the batch at offset ${meta?.baseOffset}, expected ${p.destinationNext}: something else writes to the destination topic`,
    )
  }
  messages.forEach((m, i) => account(p, m, base + i))
}

export async function copyTopic(from: Endpoint, to: Endpoint, state: TopicState, hooks: CopyHooks): Promise<void> {
  const destination = await watermarks(to.admin, state.topic)
  const unsaved = new Map<number, number>()
  for (const p of state.partitions) {
    const high = destination.get(p.partition)!.high
    if (high < p.destinationNext) {
      throw new KafkaJSNonRetriableError(
        `${state.topic}: partition ${p.partition} of the destination ends at ${high}, but the copy had written up to ${p.destinationNext}`,
      )
    }
    if (high > p.destinationNext) unsaved.set(p.partition, high - p.destinationNext)
  }
  const ranges = new Map<number, Range>(state.partitions.map((p) => [p.partition, { from: p.sourceNext, to: p.sourceEnd }]))
  const producer = to.kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false })
  await producer.connect()
  try {
    await readRanges(from, state.topic, ranges, async (partition, messages) => {
      const p = state.partitions.find((x) => x.partition === partition)!
      let rest = messages
      const skip = Math.min(unsaved.get(partition) ?? 0, rest.length)
      if (skip > 0) {
        rest.slice(0, skip).forEach((m) => account(p, m, p.destinationNext))
        unsaved.set(partition, unsaved.get(partition)! - skip)
        rest = rest.slice(skip)
      }
      for (let i = 0; i < rest.length; i += SEND_BATCH) await sendBatch(producer, state.topic, p, rest.slice(i, i + SEND_BATCH))
      await hooks.saved()
      hooks.progress(partition, messages.length)
    })
  } finally {
    await producer.disconnect()
  }
}
