// Reads offset ranges of a topic's partitions through a consumer of a throwaway group (seeked to each range's
// start, nothing committed, the group deleted afterwards), handing each partition's messages over in offset order,
// each once. A range must end at a message (a Kafka log ending in a transaction marker is not supported).
import { randomBytes } from 'node:crypto'
import type { KafkaMessage } from 'kafkajs'
import { KafkaJSError } from '../kafkajs/errors.js'
import { READER_GROUP_PREFIX, type Endpoint } from './endpoints.js'

export interface Range {
  from: number
  /** exclusive */
  to: number
}

export type BatchHandler = (partition: number, messages: KafkaMessage[]) => Promise<void>

/** A read that receives nothing for this long while ranges are pending fails (the run is resumable) instead of hanging. */
export const DEFAULT_STALL_MS = 120_000

export async function readRanges(
  endpoint: Endpoint,
  topic: string,
  ranges: Map<number, Range>,
  onBatch: BatchHandler,
  stallMs = DEFAULT_STALL_MS,
): Promise<void> {
  const pending = new Map([...ranges].filter(([, r]) => r.to > r.from))
  if (pending.size === 0) return
  const nextOf = new Map([...pending].map(([partition, r]) => [partition, r.from]))
  const groupId = `${READER_GROUP_PREFIX}${randomBytes(6).toString('hex')}`
  const consumer = endpoint.kafka.consumer({ groupId, maxWaitTimeInMs: 500, allowAutoTopicCreation: false })
  let finish!: () => void
  let fail!: (err: unknown) => void
  const done = new Promise<void>((resolve, reject) => ((finish = resolve), (fail = reject)))
  done.catch(() => undefined) // a failure before `await done` is reached is still thrown there, not reported unhandled
  let lastProgress = Date.now()
  const watchdog = setInterval(
    () => {
      if (Date.now() - lastProgress < stallMs) return
      const where = [...pending].map(([p]) => `partition ${p} at ${nextOf.get(p)} of ${ranges.get(p)!.to}`).join(', ')
      fail(new KafkaJSError(`${topic}: nothing read for ${Math.round(stallMs / 1000)} s (${where}); run again to resume`, { retriable: true }))
    },
    Math.min(stallMs, 1000),
  )
  watchdog.unref()
  try {
    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) fail(payload.error)
    })
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
        const range = pending.get(batch.partition)
        if (!range) return
        // `next` only grows: a batch fetched before the seek applied, or replayed after a rebalance, is not handed twice
        const next = nextOf.get(batch.partition)!
        const messages = batch.messages.filter((m) => Number(m.offset) >= next && Number(m.offset) < range.to)
        if (messages.length > 0) {
          await onBatch(batch.partition, messages)
          nextOf.set(batch.partition, Number(messages[messages.length - 1]!.offset) + 1)
        }
        const last = batch.messages[batch.messages.length - 1]
        lastProgress = Date.now()
        if (last) resolveOffset(last.offset)
        await heartbeat()
        if (last && Number(last.offset) + 1 >= range.to) pending.delete(batch.partition)
        if (pending.size === 0) finish()
      },
    })
    for (const [partition, range] of pending) consumer.seek({ topic, partition, offset: String(range.from) })
    await done
  } finally {
    clearInterval(watchdog)
    await consumer.disconnect()
    await endpoint.admin.deleteGroups([groupId]).catch(() => undefined)
  }
}
