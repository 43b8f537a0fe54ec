// Metrics from any KafkaJS client, real or pgQueue: consumers through their instrumentation events, producers by
// wrapping send. The pgQueue consumer additionally reports enqueue times (OBSERVE_BATCHES) for the queue-time metric.
import type { Consumer, Producer, ProducerBatch, ProducerRecord, Transaction } from 'kafkajs'
import type { DeadLetterEvent, DeadLetterHandler } from '../deadLetter/index.js'
import { OBSERVE_BATCHES, type BatchObservable } from './hooks.js'
import type { PgQueueMetrics } from './metrics.js'

export interface ConsumerMetricsOptions {
  /** the consumer_group label until the consumer joins (GROUP_JOIN says which group it is) */
  groupId?: string
}

/** Counts consumed messages, handler time and crashes of one consumer; returns the detach function. */
export function attachConsumerMetrics(consumer: Consumer, metrics: PgQueueMetrics, opts: ConsumerMetricsOptions = {}): () => void {
  const system = metrics.messagingSystem
  let group = opts.groupId ?? ''
  const { events } = consumer
  const removers = [
    consumer.on(events.GROUP_JOIN, (e) => {
      group = e.payload.groupId
    }),
    consumer.on(events.END_BATCH_PROCESS, (e) => {
      const labels = { messaging_system: system, topic: e.payload.topic, consumer_group: group }
      metrics.consumed.inc(labels, e.payload.batchSize)
      metrics.handlerDuration.observe(labels, e.payload.duration / 1000)
    }),
    consumer.on(events.CRASH, (e) => {
      metrics.crashes.inc({ messaging_system: system, consumer_group: e.payload.groupId ?? group, restart: String(e.payload.restart) })
    }),
  ]
  const observe = (consumer as Consumer & BatchObservable)[OBSERVE_BATCHES]
  if (typeof observe === 'function') removers.push(observe.call(consumer, (o) => metrics.observeBatch(o)))
  return () => removers.forEach((remove) => remove())
}

/** Counts the dead-letter extension's retries and dead-lettered messages; returns the detach function. */
export function attachDeadLetterMetrics(handler: DeadLetterHandler, metrics: PgQueueMetrics): () => void {
  const labels = (e: DeadLetterEvent) => ({ messaging_system: metrics.messagingSystem, topic: e.payload.topic, consumer_group: e.payload.groupId })
  const removers = [
    handler.on(handler.events.RETRY, (e) => metrics.retries.inc(labels(e))),
    handler.on(handler.events.DEAD_LETTER, (e) => metrics.deadLettered.inc(labels(e))),
  ]
  return () => removers.forEach((remove) => remove())
}

type Sender = Pick<Producer, 'send' | 'sendBatch'>
type Counted = (records: ProducerRecord[]) => void

const recordsOf = (batch: ProducerBatch): ProducerRecord[] => (batch.topicMessages ?? []).map((t) => ({ topic: t.topic, messages: t.messages }))

/** Replaces send / sendBatch (and the outbox sendWith / sendBatchWith when present) by counting versions. */
function wrapSends(target: Sender, onSent: Counted, onFailed: Counted): () => void {
  const t = target as Sender & Record<string, unknown>
  const originals = new Map<string, unknown>()
  const wrap = (name: string, records: (args: unknown[]) => ProducerRecord[]) => {
    const original = t[name]
    if (typeof original !== 'function') return
    originals.set(name, original)
    t[name] = async (...args: unknown[]) => {
      try {
        const result = await original.apply(target, args)
        onSent(records(args))
        return result
      } catch (err) {
        onFailed(records(args))
        throw err
      }
    }
  }
  wrap('send', (a) => [a[0] as ProducerRecord])
  wrap('sendBatch', (a) => recordsOf(a[0] as ProducerBatch))
  wrap('sendWith', (a) => [a[1] as ProducerRecord])
  wrap('sendBatchWith', (a) => recordsOf(a[1] as ProducerBatch))
  return () => originals.forEach((fn, name) => (t[name] = fn))
}

/**
 * Counts messages sent per topic. A producer transaction's messages are counted when it commits (an abort sends
 * nothing); outbox sends (sendWith) are counted when written into the caller's transaction.
 */
export function attachProducerMetrics(producer: Producer, metrics: PgQueueMetrics): () => void {
  const system = metrics.messagingSystem
  const count = (counter: PgQueueMetrics['produced']) => (records: ProducerRecord[]) => {
    for (const r of records) counter.inc({ messaging_system: system, topic: r.topic }, r.messages?.length ?? 0)
  }
  const sent = count(metrics.produced)
  const failed = count(metrics.produceErrors)
  const restoreSends = wrapSends(producer, sent, failed)
  const transaction = producer.transaction
  producer.transaction = async () => {
    const tx: Transaction = await transaction.call(producer)
    const pending: ProducerRecord[] = []
    wrapSends(tx, (records) => pending.push(...records), failed)
    const commit = tx.commit
    tx.commit = async () => {
      await commit.call(tx)
      sent(pending.splice(0))
    }
    return tx
  }
  return () => {
    restoreSends()
    producer.transaction = transaction
  }
}
