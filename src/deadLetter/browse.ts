// Inspecting and replaying a dead-letter topic through the KafkaJS API, so it works on either transport: read the
// chosen offset ranges (by default the whole topic) up to the current end with a throwaway group (deleted
// afterwards), seeking to where each range starts, and send chosen messages back to the partition they came from
// with their original headers.
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

/** Offsets `from` to `to` (both inclusive) of one partition; either end open means the partition's own end. */
export interface DeadLetterRange {
  partition: number
  from?: string
  to?: string
}

export interface ReadDeadLettersOptions {
  /** at most this many entries (default 1000) */
  limit?: number
  /** only these ranges (partitions not named are not read); default every partition, whole */
  ranges?: DeadLetterRange[]
}

/** Where reading starts and stops (exclusive) per partition: the ranges clipped to what the topic holds now. */
function plan(ends: Array<{ partition: number; low: bigint; high: bigint }>, ranges: DeadLetterRange[] | undefined) {
  const out = new Map<number, { start: bigint; end: bigint }>()
  for (const e of ends) {
    for (const r of ranges ?? [{ partition: e.partition }]) {
      if (r.partition !== e.partition) continue
      const start = r.from === undefined ? e.low : BigInt(r.from) > e.low ? BigInt(r.from) : e.low
      const end = r.to === undefined ? e.high : BigInt(r.to) + 1n < e.high ? BigInt(r.to) + 1n : e.high
      const seen = out.get(e.partition)
      // two ranges of one partition: read from the lower start to the higher end
      const merged = seen ? { start: seen.start < start ? seen.start : start, end: seen.end > end ? seen.end : end } : { start, end }
      if (merged.end > merged.start) out.set(e.partition, merged)
    }
  }
  return out
}

/**
 * The messages of `topic` in the chosen ranges (default all of it) up to its high watermark at the time of the
 * call, at most `limit`, ordered by partition and offset. Only the ranges are read.
 */
export async function readDeadLetters(kafka: AnyKafka, topic: string, options: ReadDeadLettersOptions = {}): Promise<DeadLetterEntry[]> {
  const limit = options.limit ?? 1000
  const admin = kafka.admin()
  await admin.connect()
  const groupId = `kafkajs-pgqueue-dead-letter-reader-${randomUUID()}`
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 })
  try {
    const ends = (await admin.fetchTopicOffsets(topic)).map((p) => ({ partition: p.partition, low: BigInt(p.low), high: BigInt(p.high) }))
    const reads = plan(ends, options.ranges)
    const wanted = [...reads.values()].reduce((n, r) => n + Number(r.end - r.start), 0)
    const entries: DeadLetterEntry[] = []
    if (wanted === 0) return entries
    await consumer.connect()
    // from the end: a partition is read only from where its range starts (the seeks below)
    await consumer.subscribe({ topic, fromBeginning: false })
    const max = Math.min(limit, wanted)
    await new Promise<void>((resolve, reject) => {
      consumer.on(consumer.events.CRASH, (e) => reject(e.payload.error))
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            const r = reads.get(partition)
            const offset = BigInt(message.offset)
            if (entries.length >= max || !r || offset < r.start || offset >= r.end) return
            entries.push({
              partition,
              offset: message.offset,
              key: message.key,
              value: message.value,
              headers: message.headers ?? {},
              origin: originOf(message.headers),
            })
            if (entries.length >= max) resolve()
          },
        })
        .catch(reject)
      for (const [partition, r] of reads) consumer.seek({ topic, partition, offset: r.start.toString() })
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
  if (orphan)
    throw new KafkaJSNonRetriableError(`Dead-letter entry ${orphan.partition}:${orphan.offset} has no origin headers; it cannot be replayed`)
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
