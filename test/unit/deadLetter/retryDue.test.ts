// retry-topics: a message is handled once its due time (the sender's wall clock) has come, but never waits longer
// than the backoff's maximum, whatever the clocks say.
import type { KafkaMessage } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { RETRY_HEADERS, DLT_HEADERS } from '../../../src/deadLetter/headers.js'
import { resolveOptions } from '../../../src/deadLetter/options.js'
import { retryTopicPolicy, type Delivery, type PolicyRuntime } from '../../../src/deadLetter/policy.js'

function dueIn(ms: number): Delivery {
  const message = {
    offset: '7',
    headers: { [RETRY_HEADERS.notBefore]: String(Date.now() + ms), [DLT_HEADERS.attempts]: '1' },
  } as unknown as KafkaMessage
  return { topic: 'orders.retry-1', partition: 0, message, heartbeat: async () => {} }
}

function policyWaiting() {
  const waits: number[] = []
  const rt = {
    o: resolveOptions({ topic: 'orders.dlq', groupId: 'g', mode: 'retry-topics', backoff: { initialMs: 100, maxMs: 2000 } }),
    settle: async () => 'handle',
    wait: async (_d: Delivery, ms: number) => void waits.push(ms),
  } as unknown as PolicyRuntime
  return { policy: retryTopicPolicy(rt), waits }
}

describe('retry-topics due time', () => {
  it('waits until the message is due', async () => {
    const { policy, waits } = policyWaiting()
    expect(await policy.due(dueIn(1500))).toBe('handle')
    expect(waits).toHaveLength(1)
    expect(waits[0]).toBeGreaterThan(1000)
    expect(waits[0]).toBeLessThanOrEqual(1500)
  })

  it('waits no longer than backoff.maxMs when the due time is further off (a clock behind the sender, or stepped back)', async () => {
    const { policy, waits } = policyWaiting()
    // before: 30 minutes
    expect(await policy.due(dueIn(30 * 60_000))).toBe('handle')
    expect(waits).toEqual([2000])
  })
})
