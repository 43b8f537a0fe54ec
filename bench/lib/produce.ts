// Producing for the scenarios: timed throughput runs, untimed pre-fills, fixed-rate sends and transactions.
import { randomBytes } from 'node:crypto'
import type { Message, Producer } from 'kafkajs'
import { makeKafka, type Target } from './target.js'

export const MESSAGE_BYTES = 256

/** Incompressible values (random bytes), a pool reused round robin: the payload a codec cannot shrink. */
const POOL = Array.from({ length: 1024 }, () => randomBytes(MESSAGE_BYTES))

/** `partitions`: each message names its partition, round robin over that many (otherwise the partitioner picks). */
export function messages(count: number, from = 0, partitions = 0): Message[] {
  return Array.from({ length: count }, (_, i) =>
    partitions > 0 ? { value: POOL[(from + i) % POOL.length], partition: (from + i) % partitions } : { value: POOL[(from + i) % POOL.length] },
  )
}

export const now = () => performance.timeOrigin + performance.now()

export async function withProducer<T>(
  target: Target,
  fn: (p: Producer) => Promise<T>,
  config: Parameters<ReturnType<typeof makeKafka>['producer']>[0] = {},
): Promise<T> {
  const producer = makeKafka(target, 'bench-producer').producer(config)
  await producer.connect()
  try {
    return await fn(producer)
  } finally {
    await producer.disconnect()
  }
}

export interface ProduceResult {
  messages: number
  ms: number
  perSecond: number
  mbPerSecond: number
}

/**
 * Sends `total` messages in sends of `batch` messages with `inFlight` sends outstanding at a time (each sender
 * awaits its send before the next, as application code does), acks = all; `partitions` as for messages().
 */
export async function produce(
  producer: Producer,
  topic: string,
  total: number,
  batch: number,
  inFlight: number,
  partitions = 0,
): Promise<ProduceResult> {
  const sends = Math.ceil(total / batch)
  const prepared = Array.from({ length: Math.min(sends, 64) }, (_, i) => messages(batch, i * batch, partitions))
  let next = 0
  const started = now()
  const sender = async () => {
    for (let i = next++; i < sends; i = next++) {
      await producer.send({ topic, acks: -1, messages: prepared[i % prepared.length]!.slice(0, Math.min(batch, total - i * batch)) })
    }
  }
  await Promise.all(Array.from({ length: Math.min(inFlight, sends) }, sender))
  const ms = now() - started
  return { messages: total, ms, perSecond: total / (ms / 1000), mbPerSecond: (total * MESSAGE_BYTES) / (ms / 1000) / 1e6 }
}

/** Untimed: fills a topic as fast as the backend takes it. */
export async function prefill(target: Target, topic: string, total: number, partitions = 0): Promise<void> {
  await withProducer(target, (p) => produce(p, topic, total, 1000, 4, partitions))
}

/**
 * Sends one message per send at a fixed rate, without waiting for earlier sends (a steady stream of events);
 * each value starts with its send time (float64 ms) so the consumer can compute produce-to-handler latency.
 */
export async function produceAtRate(producer: Producer, topic: string, perSecond: number, seconds: number): Promise<number> {
  const total = Math.round(perSecond * seconds)
  const pending = new Set<Promise<unknown>>()
  const started = now()
  let sent = 0
  let failure: unknown
  while (sent < total) {
    const due = Math.min(total, Math.floor(((now() - started) * perSecond) / 1000) + 1)
    for (; sent < due; sent++) {
      const value = Buffer.from(POOL[sent % POOL.length]!)
      value.writeDoubleLE(now(), 0)
      const p = producer.send({ topic, acks: -1, messages: [{ value }] }).catch((e: unknown) => (failure ??= e))
      pending.add(p)
      void p.finally(() => pending.delete(p))
    }
    if (failure) throw failure
    await new Promise((r) => setTimeout(r, 1))
  }
  await Promise.all(pending)
  if (failure) throw failure
  return total
}

/** Transactions of `size` messages each, one after another, for `seconds`. */
export async function produceTransactions(
  producer: Producer,
  topic: string,
  size: number,
  seconds: number,
): Promise<{ transactions: number; ms: number }> {
  const batch = messages(size)
  const started = now()
  let transactions = 0
  while (now() - started < seconds * 1000) {
    const tx = await producer.transaction()
    await tx.send({ topic, messages: batch })
    await tx.commit()
    transactions++
  }
  return { transactions, ms: now() - started }
}
