// What happens when a wrapped handler fails on a message, in each mode. Both eachMessage and eachBatch go through
// a policy: `due` before a message is handled, `failed` after the handler threw on it, `succeeded` after it got
// through. `failed` answers `again` (the wait is over: call the handler on it again) or `moved` (the message went
// to a retry or the dead-letter topic with its offset committed, now or by an earlier move: go on after it). A
// move is final: once it committed nothing after it fails the handler, and a message delivered again after a move
// whose outcome this process did not learn is looked up first (`due` answers `done`: resolve it, do not handle it).
import type { IHeaders, KafkaMessage } from 'kafkajs'
import type { AttemptKey, AttemptLog } from './attempts.js'
import { deadLetterHeaders, originOf, retryHeaders, retryStateOf } from './headers.js'
import { retryDelay, type ResolvedOptions } from './options.js'

export interface Delivery {
  topic: string
  partition: number
  message: KafkaMessage
  heartbeat(): Promise<void>
  /**
   * false: a message before this one in its batch was left unresolved (eachBatch), so a move must not commit past
   * this message; the batch's own resolve decides (absent: true)
   */
  commitPast?: boolean
}

export interface FailurePolicy {
  /** `done`: the message was moved already (by a move whose outcome was not known here), so it is only resolved */
  due(d: Delivery): Promise<'handle' | 'done'>
  /** the message's move threw here, or committed nothing (Delivery.commitPast), so `due` settles it before it is
   * handled again: a batch starts a run at it */
  unsettled(d: Delivery): boolean
  failed(d: Delivery, error: Error): Promise<'again' | 'moved'>
  succeeded(d: Delivery): Promise<void>
}

/** What the policies need from the handler: the move (send + commit), the heartbeating wait, the events. */
export interface PolicyRuntime {
  o: ResolvedOptions
  /**
   * sends the message on to `topic` and commits past it unless `d.commitPast` is false (one transaction where the
   * producer has an id). False when
   * it had been moved already (pgQueue: the transaction found its mark, and aborted).
   */
  forward(d: Delivery, topic: string, headers: IHeaders, attempts: number, error: Error): Promise<boolean>
  /** `done` when the message's move threw here earlier and the group turns out to be done with it */
  settle(d: Delivery): Promise<'handle' | 'done'>
  unsettled(d: Delivery): boolean
  wait(d: Delivery, ms: number): Promise<void>
  retried(d: Delivery, attempts: number, error: Error, delayMs: number, retryTopic?: string): void
  deadLettered(d: Delivery, attempts: number, error: Error, deadLetterTopic: string): void
}

export const keyOf = (o: ResolvedOptions, d: Delivery): AttemptKey => ({
  group: o.groupId,
  topic: d.topic,
  partition: d.partition,
  offset: d.message.offset,
})
export const idOf = (k: AttemptKey) => `${k.topic}\u0000${k.partition}\u0000${k.offset}`

/** Moves the message to its dead-letter topic (unless it was moved already); `after` runs before the event. */
async function deadLetter(rt: PolicyRuntime, d: Delivery, attempts: number, error: Error, after = () => {}): Promise<void> {
  // a message from a retry topic goes to the dead-letter topic of the topic it was first sent to
  const target = rt.o.topicFor(originOf(d.message.headers)?.topic ?? d.topic)
  const moved = await rt.forward(d, target, deadLetterHeaders(d, rt.o.groupId, attempts, error), attempts, error)
  after()
  if (moved) rt.deadLettered(d, attempts, error, target)
}

/**
 * blocking: retried in place with backoff while the partition waits. The stored count is read only after a first
 * failure, so a message that succeeds costs nothing extra; after a restart the count goes on from what was stored.
 */
export function inPlacePolicy(rt: PolicyRuntime, log: AttemptLog): FailurePolicy {
  const counts = new Map<string, number>() // failures of messages being retried now, by this process
  return {
    due: (d) => rt.settle(d),
    unsettled: (d) => rt.unsettled(d),
    async failed(d, error) {
      const key = keyOf(rt.o, d)
      const attempts = (counts.get(idOf(key)) ?? (await log.read(key)).attempts) + 1
      if (attempts >= rt.o.maxAttempts) {
        await deadLetter(rt, d, attempts, error, () => {
          counts.delete(idOf(key))
          log.moved(key)
        })
        return 'moved'
      }
      counts.set(idOf(key), attempts)
      await log.failed(key, attempts, `${error.name}: ${error.message}`)
      const delayMs = retryDelay(attempts, rt.o.backoff, Math.random())
      rt.retried(d, attempts, error, delayMs)
      try {
        await rt.wait(d, delayMs)
      } catch (e) {
        counts.delete(idOf(key)) // left for the next owner, who reads the stored count
        throw e
      }
      return 'again'
    },
    async succeeded(d) {
      const key = keyOf(rt.o, d)
      if (counts.delete(idOf(key))) await log.forget(key)
    },
  }
}

/**
 * retry-topics: a failure sends the message to the retry topic of its next attempt at once (the partition moves
 * on); a message from a retry topic is handled once it is due. The count travels in the message's headers.
 */
export function retryTopicPolicy(rt: PolicyRuntime): FailurePolicy {
  return {
    async due(d) {
      if ((await rt.settle(d)) === 'done') return 'done'
      const state = retryStateOf(d.message.headers)
      // the due time is another process's wall clock plus at most maxMs: waiting longer would only be a clock
      // behind that one (or stepped back), holding the retry topic's partition for the size of the difference
      if (state) await rt.wait(d, Math.min(state.notBefore - Date.now(), rt.o.backoff.maxMs))
      return 'handle'
    },
    unsettled: (d) => rt.unsettled(d),
    async failed(d, error) {
      const attempts = (retryStateOf(d.message.headers)?.attempts ?? 0) + 1
      if (attempts >= rt.o.maxAttempts) {
        await deadLetter(rt, d, attempts, error)
        return 'moved'
      }
      const delayMs = retryDelay(attempts, rt.o.backoff, Math.random())
      // retry topics are named after the topic the message was first sent to
      const target = rt.o.retryTopicFor(originOf(d.message.headers)?.topic ?? d.topic, attempts)
      if (await rt.forward(d, target, retryHeaders(d, rt.o.groupId, attempts, error, Date.now() + delayMs), attempts, error)) {
        rt.retried(d, attempts, error, delayMs, target)
      }
      return 'moved'
    },
    succeeded: async () => {},
  }
}
