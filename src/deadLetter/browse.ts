// Inspecting and replaying a dead-letter topic through the KafkaJS API, so it works on either transport: read the
// topic up to its current end with a throwaway group (deleted afterwards), and send chosen messages back to the
// partition they came from with their original headers.
import { randomUUID } from 'node:crypto'
import type { IHeaders, Kafka as KafkaJSKafka } from 'kafkajs'
import type { Kafka as PgQueueKafka } from '../kafka.js'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { originalHeaders, originOf, type Origin } from './headers.js'

export interface DeadLetterEntry {
  /** where the entry is in the dead-letter topic */
  partition: number
  offset: string
  key: Buffer | null
  value: Buffer | null
  headers: IHeaders
  /** where it came from and why it failed (undefined when the message has no dead-letter headers) */
  origin?: Origin
}

type AnyKafka = KafkaJSKafka | PgQueueKafka

/** Every message of `topic` from its low watermark to its high watermark at the time of the call (at most `limit`). */
export async function readDeadLetters(kafka: AnyKafka, topic: string, { limit = 1000 }: { limit?: number } = {}): Promise<DeadLetterEntry[]> {
  const admin = kafka.admin()
  await admin.connect()
  const groupId = `kafkajs-pgqueue-dead-letter-reader-${randomUUID()}`
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 })
  try {
    const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, { low: BigInt(p.low), high: BigInt(p.high) }]))
    const wanted = [...ends.values()].reduce((n, e) => n + Number(e.high - e.low), 0)
    const entries: DeadLetterEntry[] = []
    if (wanted === 0) return entries
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    const max = Math.min(limit, wanted)
    await new Promise<void>((resolve, reject) => {
      consumer.on(consumer.events.CRASH, (e) => reject(e.payload.error))
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            if (entries.length >= max || BigInt(message.offset) >= ends.get(partition)!.high) return
            entries.push({ partition, offset: message.offset, key: message.key, value: message.value, headers: message.headers ?? {}, origin: originOf(message.headers) })
            if (entries.length >= max) resolve()
          },
        })
        .catch(reject)
    })
    return entries.sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)))
  } finally {
    await consumer.disconnect()
    await admin.deleteGroups([groupId]).catch(() => undefined)
    await admin.disconnect()
  }
}

/** Sends entries back to the topic and partition they came from, with their original key, value and headers. */
export async function replayDeadLetters(kafka: AnyKafka, entries: DeadLetterEntry[]): Promise<number> {
  const orphan = entries.find((e) => !e.origin)
  if (orphan) throw new KafkaJSNonRetriableError(`Dead-letter entry ${orphan.partition}:${orphan.offset} has no origin headers; it cannot be replayed`)
  if (entries.length === 0) return 0
  const producer = kafka.producer()
  await producer.connect()
  try {
    for (const e of entries) {
      await producer.send({
        topic: e.origin!.topic,
        messages: [{ partition: e.origin!.partition, key: e.key, value: e.value, headers: originalHeaders(e.headers) }],
      })
    }
  } finally {
    await producer.disconnect()
  }
  return entries.length
}
