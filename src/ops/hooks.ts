// The seams between the consumer and the operations layer. No imports: the consumer can depend on this module
// without depending on prom-client or the rest of src/ops.

/** One handled batch, as the runner saw it (its `observer`). */
export interface BatchObservation {
  topic: string
  partition: number
  groupId: string
  count: number
  durationMs: number
  /** when the handler started on the batch, ms since the epoch */
  startedAt: number
  /** per message: when it was enqueued, ms since the epoch */
  enqueueTimestamps: number[]
  /** per message: its priority (0..9) */
  priorities: number[]
  /** per message: the index of its weighted-fair-queuing band */
  bands: number[]
}

export type BatchObserver = (observation: BatchObservation) => void

/**
 * A pgQueue consumer offers `consumer[OBSERVE_BATCHES](observer)` (returning the remover); a KafkaJS consumer does
 * not, which is how the metrics tell the transports apart. Symbol.for, so copies of this package agree on it.
 */
export const OBSERVE_BATCHES: unique symbol = Symbol.for('kafkajs-pgqueue.observeBatches') as never

export type BatchObservable = { [OBSERVE_BATCHES]?: (observer: BatchObserver) => () => void }
