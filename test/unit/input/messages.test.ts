// Producer input the validator must refuse with a KafkaJS error before anything is written (the DB-backed twin,
// test/integration/input/producer.test.ts, checks that nothing is written). Also the offsets of seek / commitOffsets
// / setOffsets, and client / group ids.
import { describe, expect, it } from 'vitest'
import { validateOffsetEntry } from '../../../src/kafkajs/offsetValidation.js'
import { KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import {
  normalizeMessage,
  normalizeProducerBatch,
  validateClientId,
  validateGroupId,
  validateTopicName,
} from '../../../src/kafkajs/messageValidation.js'

const rejects = (fn: () => unknown, pattern?: RegExp) => {
  let error: unknown
  try {
    fn()
  } catch (e) {
    error = e
  }
  expect(error, 'expected a rejection').toBeInstanceOf(KafkaJSNonRetriableError)
  if (pattern) expect((error as Error).message).toMatch(pattern)
}

describe('topic names', () => {
  it.each([
    ['', /Invalid topic/],
    ['a'.repeat(250), /longer than 249/],
    ['.', /not allowed/],
    ['..', /not allowed/],
    ['bad topic', /only ASCII letters/],
    ['x"; DROP TABLE y; --', /only ASCII letters/],
    ["'", /only ASCII letters/],
    ["o'neil", /only ASCII letters/],
    ['tópico', /only ASCII letters/],
    ['日本', /only ASCII letters/],
    ['a\u0000b', /only ASCII letters/],
    ['a/b', /only ASCII letters/],
  ])('%j is refused', (name, pattern) => rejects(() => validateTopicName(name), pattern))

  it.each([42, {}, [], true])('%j (not a string) is refused', (name) => rejects(() => validateTopicName(name)))
  it.each(['a', 'a.b_c-D9', 'x'.repeat(249)])('%j is fine', (name) => expect(() => validateTopicName(name)).not.toThrow())
})

describe('group and client ids', () => {
  it.each(['', 'g'.repeat(256), 'a\u0000b', 'line\nbreak', 'tab\tid', '\u0085next-line'])('groupId %j is refused', (id) =>
    rejects(() => validateGroupId(id)),
  )
  it.each([undefined, null, 7, {}])('groupId %j (not a non-empty string) is refused', (id) => rejects(() => validateGroupId(id)))
  // quotes, SQL and unicode are legal Kafka group ids: they reach SQL only as bound values
  it.each(['x"; DROP TABLE y; --', "'", 'grüppe-日本', 'g'.repeat(255)])('groupId %j is accepted', (id) =>
    expect(() => validateGroupId(id)).not.toThrow(),
  )
  it.each(['c'.repeat(256), 'a\u0000b', 'bell\u0007', 12, {}])('clientId %j is refused', (id) => rejects(() => validateClientId(id)))
})

describe('messages', () => {
  const one = (message: unknown, maxMessageBytes?: number) => () => normalizeProducerBatch([{ topic: 't', messages: [message] }], { maxMessageBytes })

  it.each([
    ['no value', { key: 'k' }, /without value/],
    ['a numeric value', { value: 42 }, /Invalid value/],
    ['an object value', { value: { a: 1 } }, /Invalid value/],
    ['a boolean value', { value: true }, /Invalid value/],
    ['a Uint8Array value (not a Buffer)', { value: new Uint8Array([1, 2]) }, /Invalid value/],
    ['an array value', { value: ['a'] }, /Invalid value/],
    ['a numeric key', { key: 1, value: 'v' }, /Invalid key/],
    ['an object key', { key: { id: 1 }, value: 'v' }, /Invalid key/],
    ['a symbol key', { key: Symbol('k'), value: 'v' }, /Invalid key/],
    ['headers as an array', { value: 'v', headers: [['a', 'b']] }, /Invalid headers/],
    ['headers as a string', { value: 'v', headers: 'a=b' }, /Invalid headers/],
    ['headers as a Map', { value: 'v', headers: new Map([['a', 'b']]) }, /Invalid headers/],
    ['a numeric header value', { value: 'v', headers: { a: 1 } }, /Invalid header "a"/],
    ['an object header value', { value: 'v', headers: { a: { b: 'c' } } }, /Invalid header "a"/],
    ['a bad element in a header array', { value: 'v', headers: { a: ['ok', 5] } }, /Invalid header "a"/],
    ['priority -1', { value: 'v', priority: -1 }, /Invalid priority/],
    ['priority 10', { value: 'v', priority: 10 }, /Invalid priority/],
    ['priority 1.5', { value: 'v', priority: 1.5 }, /Invalid priority/],
    ['priority NaN', { value: 'v', priority: Number.NaN }, /Invalid priority/],
    ['priority "5"', { value: 'v', priority: '5' }, /Invalid priority/],
    ['partition -1', { value: 'v', partition: -1 }, /Invalid partition/],
    ['partition 1.5', { value: 'v', partition: 1.5 }, /Invalid partition/],
    ['partition "0"', { value: 'v', partition: '0' }, /Invalid partition/],
    ['partition NaN', { value: 'v', partition: Number.NaN }, /Invalid partition/],
    ['timestamp "yesterday"', { value: 'v', timestamp: 'yesterday' }, /Invalid timestamp/],
    ['timestamp -1', { value: 'v', timestamp: -1 }, /Invalid timestamp/],
    ['a message that is not an object', 'just a string', /Invalid message/],
  ])('%s is refused', (_what, message, pattern) => rejects(one(message), pattern))

  it('null as a message fails as in KafkaJS (a TypeError reading its value)', () => {
    expect(one(null)).toThrow(TypeError)
  })

  it('messages over maxMessageBytes are refused (key + value + headers count)', () => {
    rejects(one({ value: Buffer.alloc(1001) }, 1000), /Message too large.*1001 bytes.*maximum of 1000/)
    rejects(one({ key: 'k'.repeat(600), value: 'v'.repeat(401) }, 1000), /too large/)
    rejects(one({ value: 'v', headers: { h: 'x'.repeat(1000) } }, 1000), /too large/)
    expect(() => one({ value: Buffer.alloc(1000) }, 1000)()).not.toThrow()
    // multi-byte characters count as bytes, not characters
    rejects(one({ value: 'é'.repeat(501) }, 1000), /too large/)
  })

  it('one bad message refuses the whole batch, whatever its position', () => {
    rejects(() =>
      normalizeProducerBatch([
        { topic: 'a', messages: [{ value: 'ok' }] },
        { topic: 'b', messages: [{ value: 'ok' }, { value: 'ok', priority: 11 }] },
      ]),
    )
    rejects(() =>
      normalizeProducerBatch([
        { topic: 'a', messages: [{ value: 'ok' }] },
        { topic: 'bad topic', messages: [{ value: 'ok' }] },
      ]),
    )
    rejects(() => normalizeProducerBatch([{ topic: 'a', messages: 'nope' }]), /Invalid messages array/)
    rejects(() => normalizeProducerBatch('nope'), /Invalid topicMessages/)
  })

  // jsonb (the header column) cannot store U+0000 nor a lone surrogate: the send fails inside PostgreSQL instead of
  // being refused up front with a clear message.
  it.each([
    ['a NUL in a header name', { value: 'v', headers: { 'a\u0000b': 'x' } }],
    ['a lone surrogate in a header name', { value: 'v', headers: { 'a\ud800': 'x' } }],
  ])('%s is refused by validation', (_what, message) => rejects(one(message), /header/i))

  it('what is accepted is normalised to bytes', () => {
    const m = normalizeMessage('t', { key: 'k', value: Buffer.from([0, 255]), headers: { a: ['1', Buffer.from('2')], b: null }, priority: 0 })
    expect(m.key).toEqual(Buffer.from('k'))
    expect(m.value).toEqual(Buffer.from([0, 255]))
    expect(m.headers).toEqual([
      ['a', Buffer.from('1')],
      ['a', Buffer.from('2')],
    ])
    expect(m.priority).toBe(0)
  })
})

describe('offsets for seek / commitOffsets / setOffsets', () => {
  const entry = (offset: unknown, partition: unknown = 0) => ({ topic: 't', partition: partition as number, offset: offset as string })
  it.each([Number.NaN, 'NaN', 'abc', '', '  ', '1e3', '1.5', 1.5, {}, [], null, undefined, true, '--1', '1_000'])(
    'offset %j is refused',
    (offset) => {
      rejects(() => validateOffsetEntry(entry(offset), { allowSpecial: true, checkMetadata: false }), /offset/i)
      rejects(() => validateOffsetEntry(entry(offset), { allowSpecial: false, checkMetadata: true }), /offset/i)
    },
  )
  it.each(['-3', -5, '-9223372036854775808'])('negative offset %j is refused', (offset) =>
    rejects(() => validateOffsetEntry(entry(offset), { allowSpecial: true, checkMetadata: false }), /negative/),
  )
  it('-1 and -2 are seek specials, never commits', () => {
    for (const o of ['-1', '-2', -1]) {
      expect(() => validateOffsetEntry(entry(o), { allowSpecial: true, checkMetadata: false })).not.toThrow()
      rejects(() => validateOffsetEntry(entry(o), { allowSpecial: false, checkMetadata: true }), /negative/)
    }
  })
  it.each([-1, 1.5, 'x', Number.NaN, null])('partition %j is refused', (partition) =>
    rejects(() => validateOffsetEntry(entry('1', partition), { allowSpecial: false, checkMetadata: true }), /partition/),
  )
  it('metadata must be a string or null', () => {
    rejects(() => validateOffsetEntry({ ...entry('1'), metadata: 5 as unknown as string }, { allowSpecial: false, checkMetadata: true }), /metadata/)
  })
  // enqueue_seq is int8 and seq = offset + 1: anything above 2^63 - 2 cannot be stored and used to reach SQL
  // (PostgreSQL's "out of range for type bigint", or a consumer stuck re-failing every fetch after a seek).
  it.each(['9223372036854775807', '99999999999999999999', 2 ** 64])('offset %j beyond the int8 range is refused', (offset) =>
    rejects(() => validateOffsetEntry(entry(offset), { allowSpecial: true, checkMetadata: false }), /offset/i),
  )
})
