import type { KafkaMessage } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import {
  DLT_HEADERS,
  RETRY_HEADERS,
  deadLetterHeaders,
  originOf,
  originalHeaders,
  retryHeaders,
  retryStateOf,
} from '../../../src/deadLetter/headers.js'
import { resolveOptions, retryDelay } from '../../../src/deadLetter/options.js'

describe('dead-letter options', () => {
  it('fills the documented defaults', () => {
    const o = resolveOptions({ groupId: 'g' })
    expect(o.maxAttempts).toBe(5)
    expect(o.backoff).toEqual({ initialMs: 1000, maxMs: 30_000, factor: 2, jitter: 0.2 })
    expect(o.topicFor('orders')).toBe('orders.dlq')
    expect(resolveOptions({ groupId: 'g', topic: 'all.dlq' }).topicFor('orders')).toBe('all.dlq')
    expect(o.mode).toBe('blocking')
    expect(o.retryTopicFor('orders', 2)).toBe('orders.retry-2')
  })

  it.each([
    [{ groupId: '' }, /groupId/],
    [{ groupId: 'g', maxAttempts: 1.5 }, /maxAttempts/],
    [{ groupId: 'g', backoff: { initialMs: -1 } }, /initialMs/],
    [{ groupId: 'g', backoff: { factor: 0.5 } }, /factor/],
    [{ groupId: 'g', backoff: { initialMs: 10, maxMs: 5 } }, /maxMs/],
    [{ groupId: 'g', transactionalId: '' }, /transactionalId/],
    [{ groupId: 'g', mode: 'sideways' }, /mode/],
    [{ groupId: 'g', retryTopic: 'x' }, /retryTopic/],
  ])('refuses %j', (bad, why) => {
    expect(() => resolveOptions(bad as never)).toThrow(why)
  })
})

describe('retry delay', () => {
  const b = { initialMs: 100, maxMs: 1000, factor: 3, jitter: 0 }
  it('grows by the factor from the initial wait and stops at the cap', () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelay(n, b, 0.5))).toEqual([100, 300, 900, 1000, 1000])
  })
  it('spreads by the jitter fraction either way, never past the cap or below 0', () => {
    const j = { ...b, jitter: 0.5 }
    expect(retryDelay(1, j, 0)).toBe(50)
    expect(retryDelay(1, j, 0.999999)).toBe(150)
    expect(retryDelay(9, j, 0.999999)).toBe(1000)
  })
})

describe('dead-letter headers', () => {
  const message: KafkaMessage = {
    key: null,
    value: Buffer.from('x'),
    offset: '41',
    timestamp: '1700000000000',
    attributes: 0,
    headers: { trace: 'abc' },
  }
  const source = { topic: 'orders', partition: 2, message }
  it('keep the original headers and name the origin and the error', () => {
    const h = deadLetterHeaders(source, 'billing', 3, new RangeError('too big'))
    expect(h.trace).toBe('abc')
    expect(originOf(h)).toEqual({
      topic: 'orders',
      partition: 2,
      offset: '41',
      timestamp: '1700000000000',
      group: 'billing',
      attempts: 3,
      errorClass: 'RangeError',
      errorMessage: 'too big',
    })
    expect(String(h[DLT_HEADERS.errorStack])).toContain('RangeError: too big')
    expect(originalHeaders(h)).toEqual({ trace: 'abc' })
  })
  it('accept a thrown non-Error and Buffer header values', () => {
    const h = deadLetterHeaders(source, 'g', 1, 'plain string')
    const asBuffers = Object.fromEntries(Object.entries(h).map(([k, v]) => [k, Buffer.from(String(v))]))
    expect(originOf(asBuffers)).toMatchObject({ errorClass: 'Error', errorMessage: 'plain string', attempts: 1 })
    expect(originOf({ trace: 'abc' })).toBeUndefined()
  })
  it('a hop to a retry topic keeps the first origin, counts on, and is stripped (due time too) by a replay', () => {
    const hop = retryHeaders(source, 'billing', 1, new Error('first'), 1_700_000_001_000)
    expect(retryStateOf(hop)).toEqual({ attempts: 1, notBefore: 1_700_000_001_000 })
    // the hop as the retry consumer receives it, from topic orders.retry-1 offset 0
    const again = { topic: 'orders.retry-1', partition: 0, message: { ...message, offset: '0', headers: hop } }
    const dead = deadLetterHeaders(again, 'billing.retry', 2, new Error('second'))
    expect(originOf(dead)).toMatchObject({ topic: 'orders', partition: 2, offset: '41', group: 'billing', attempts: 2, errorMessage: 'second' })
    expect(dead[RETRY_HEADERS.notBefore]).toBeUndefined()
    expect(originalHeaders(hop)).toEqual({ trace: 'abc' })
  })
})
