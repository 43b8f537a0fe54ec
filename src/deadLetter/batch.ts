// The eachBatch wrapper: the same guarantees as eachMessage for a batch handler. The handler resolves each message
// as it finishes it (KafkaJS's resolveOffset); when it throws, the first message it did not resolve is the failing
// one. That message goes through the policy (retried in place, or moved to a retry or the dead-letter topic), and
// the handler is called again with the rest of the batch from the failing message on, or from the one after it.
// A run the handler returned from without resolving its last message is handled under eachBatchAutoResolve (KafkaJS
// then resolves the batch's last offset) and not processed past the first unresolved one without it; the wrapper
// cannot see which, so it resolves nothing for the handler and, from there on, lets no resolve through: the
// auto-resolve covers the batch, or the messages from the first unresolved one on are fetched again. For the same
// reason a message moved after such a run is moved without committing its offset (the move's own commit would
// cover the unresolved message): fetched again, it is resolved without another attempt.
import type { Batch, EachBatchHandler, EachBatchPayload, KafkaMessage } from 'kafkajs'
import { KafkaJSError } from '../kafkajs/errors.js'
import type { Delivery, FailurePolicy } from './policy.js'

const asError = (e: unknown) => (e instanceof Error ? e : new Error(String(e)))

/** The batch narrowed to `messages` (a run of the original's), with KafkaJS's Batch methods over them. */
function narrowed(batch: Batch, messages: KafkaMessage[]): Batch {
  const hw = BigInt(batch.highWatermark)
  const firstOffset = () => messages[0]?.offset ?? null
  const lastOffset = () => messages[messages.length - 1]?.offset ?? (hw - 1n).toString()
  return {
    topic: batch.topic,
    partition: batch.partition,
    highWatermark: batch.highWatermark,
    messages,
    isEmpty: () => messages.length === 0,
    firstOffset,
    lastOffset,
    offsetLag: () => (hw - 1n - BigInt(lastOffset())).toString(),
    offsetLagLow: () => (hw - 1n - BigInt(firstOffset() ?? lastOffset())).toString(),
  }
}

/** How many messages from `from` on are due now (at least one: the first was waited for). */
type DueCount = (messages: KafkaMessage[], from: number) => number

export async function handleBatch(handler: EachBatchHandler, p: EachBatchPayload, policy: FailurePolicy, dueCount: DueCount): Promise<void> {
  const all = p.batch.messages
  if (all.length === 0) return handler(p)
  let from = 0
  let failing: KafkaMessage | undefined // failed before and not yet got through
  let gap = false // a run ended with a message the handler did not resolve
  // after a gap a move commits nothing: its sendOffsets would cover the unresolved message before it
  const delivery = (message: KafkaMessage): Delivery => ({
    topic: p.batch.topic,
    partition: p.batch.partition,
    message,
    heartbeat: p.heartbeat,
    commitPast: !gap,
  })
  const resolve = (offset: string) => {
    if (!gap) p.resolveOffset(offset)
  }
  while (from < all.length) {
    if ((await policy.due(delivery(all[from]!))) === 'done') {
      resolve(all[from]!.offset) // moved already: not handled again
      from++
      continue
    }
    let end = from + dueCount(all, from)
    // a message whose move threw here is looked up before it is handled: it starts a run of its own
    for (let i = from + 1; i < end; i++) {
      if (policy.unsettled(delivery(all[i]!))) {
        end = i
        break
      }
    }
    let resolved = from - 1
    const index = new Map(all.slice(from, end).map((m, i) => [m.offset, from + i]))
    const resolveOffset = (offset: string) => {
      resolve(offset)
      resolved = Math.max(resolved, index.get(offset) ?? resolved)
    }
    let error: Error
    try {
      await handler({ ...p, batch: narrowed(p.batch, all.slice(from, end)), resolveOffset })
      if (failing) await policy.succeeded(delivery(failing))
      failing = undefined
      if (resolved < end - 1) gap = true
      from = end
      continue
    } catch (e) {
      error = asError(e)
    }
    if (!p.isRunning() || p.isStale()) {
      throw new KafkaJSError(`The batch is no longer this consumer's (${error.message}); its unresolved messages go to the next owner`, {
        retriable: true,
      })
    }
    const first = resolved + 1
    if (first >= end) throw error // every message was resolved, then the handler failed: KafkaJS's retry decides
    if (failing && failing !== all[first]) await policy.succeeded(delivery(failing))
    failing = all[first]
    const outcome = await policy.failed(delivery(all[first]!), error)
    if (outcome === 'moved') {
      resolve(all[first]!.offset)
      failing = undefined
      from = first + 1
    } else {
      from = first
    }
  }
}
