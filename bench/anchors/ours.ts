// The anchors' side for this library: the public KafkaJS API (createKafka with the pgqueue transport), the same
// payloads as the peers (their JSON text as the message value), one topic partition.
import type { Message } from 'kafkajs'
import { withProducer } from '../lib/produce.js'
import { createTopic, highWatermarks, type Target } from '../lib/target.js'
import { runMembers } from '../lib/workers.js'
import type { WorkerConfig } from '../worker.js'

const now = () => performance.timeOrigin + performance.now()

/** Sends `total` messages in sends of `batch`, each awaited before the next (acks = all). Returns msg/s. */
export async function oursProduce(target: Target, topic: string, payloads: Buffer[], total: number, batch: number): Promise<number> {
  await createTopic(target, topic, 1)
  const chunk = (i: number): Message[] =>
    Array.from({ length: Math.min(batch, total - i) }, (_, k) => ({ value: payloads[(i + k) % payloads.length]! }))
  return withProducer(target, async (p) => {
    await p.send({ topic, acks: -1, messages: chunk(0) }) // connections and statements (not counted)
    const started = now()
    for (let i = 0; i < total; i += batch) await p.send({ topic, acks: -1, messages: chunk(i) })
    return total / ((now() - started) / 1000)
  })
}

/** Sends of 1,000 messages with keys (10,000 distinct, KafkaJS's default partitioner spreads them) to `partitions`. */
export async function oursProduceKeyed(target: Target, topic: string, payloads: Buffer[], total: number, partitions: number): Promise<number> {
  await createTopic(target, topic, partitions)
  const chunk = (i: number): Message[] =>
    Array.from({ length: Math.min(1000, total - i) }, (_, k) => ({
      key: `key-${((i + k) * 7919) % 10_000}`,
      value: payloads[(i + k) % payloads.length]!,
    }))
  return withProducer(target, async (p) => {
    await p.send({ topic, acks: -1, messages: chunk(0) }) // connections, statements, every partition's first rows (not counted)
    const started = now()
    for (let i = 0; i < total; i += 1000) await p.send({ topic, acks: -1, messages: chunk(i) })
    return total / ((now() - started) / 1000)
  })
}

export async function oursLoad(target: Target, topic: string, payloads: Buffer[], total: number): Promise<void> {
  await createTopic(target, topic, 1)
  await withProducer(target, async (p) => {
    for (let i = 0; i < total; i += 1000) {
      await p.send({
        topic,
        acks: -1,
        messages: Array.from({ length: Math.min(1000, total - i) }, (_, k) => ({ value: payloads[(i + k) % payloads.length]! })),
      })
    }
  })
}

/** `groups` consumer groups of one member each (its own process, eachBatch) drain the topic at once; deliveries/s. */
export async function oursDrain(target: Target, topic: string, groupIds: string[]): Promise<number> {
  const ends = await highWatermarks(target, topic)
  const configs: WorkerConfig[] = groupIds.map((groupId) => ({
    target,
    topic,
    groupId,
    mode: 'eachBatch',
    latency: false,
    gated: true,
    maxWaitTimeInMs: 100,
  }))
  const results = await runMembers(configs, topic, 1, ends)
  const firstAt = Math.min(...results.map((r) => r.firstAt))
  const lastAt = Math.max(...results.map((r) => r.lastAt))
  const deliveries = results.reduce((n, r) => n + r.count - r.duplicates, 0)
  return deliveries / (Math.max(lastAt - firstAt, 1) / 1000)
}
