import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { KafkaJSError, KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import { runs } from '../../helpers/property.js'
import {
  type TopicMessagesInput,
  type ValidationOptions,
  DEFAULT_MAX_MESSAGE_BYTES,
  normalizeMessage,
  normalizeProducerBatch,
  validateClientId,
  validateGroupId,
  validateTopicName,
} from '../../../src/kafkajs/messageValidation.js'

function errorOf(run: () => unknown): Error {
  try {
    run()
  } catch (e) {
    expect(e).toBeInstanceOf(KafkaJSNonRetriableError)
    return e as Error
  }
  throw new Error('expected a KafkaJSNonRetriableError, nothing was thrown')
}

const record1 = (record: TopicMessagesInput, options?: ValidationOptions) => normalizeProducerBatch([record], options)[0]!.messages
const send = (record: unknown) => () => record1(record as never)

describe('KafkaJS producer checks (exact messages)', () => {
  it('missing topic', () => {
    expect(errorOf(send({ messages: [{ value: 'x' }] })).message).toBe('Invalid topic')
    expect(errorOf(send({ topic: '', messages: [] })).message).toBe('Invalid topic')
    expect(errorOf(() => normalizeProducerBatch([{ topic: 'ok', messages: 'x' }, { messages: [] }])).message).toBe('Invalid topic')
  })

  it('messages not an array', () => {
    expect(errorOf(send({ topic: 't' })).message).toBe('Invalid messages array [undefined] for topic "t"')
    expect(errorOf(send({ topic: 't', messages: null })).message).toBe('Invalid messages array [null] for topic "t"')
    expect(errorOf(send({ topic: 't', messages: { value: 'x' } })).message).toBe('Invalid messages array [[object Object]] for topic "t"')
    expect(errorOf(send({ topic: 't', messages: Object.create(null) })).message).toBe('Invalid messages array [[object Object]] for topic "t"')
  })

  it('message without value', () => {
    expect(errorOf(send({ topic: 't', messages: [{ value: 'ok' }, { key: 'k' }] })).message).toBe(
      'Invalid message without value for topic "t": {"key":"k"}',
    )
    // KafkaJS reads `.value` of each message: a null one fails with the TypeError that raises
    expect(send({ topic: 't', messages: [null] })).toThrow(new TypeError("Cannot read properties of null (reading 'value')"))
    expect(errorOf(send({ topic: 't', messages: [{ key: 1n }] })).message).toBe('Invalid message without value for topic "t": {"key":"1"}')
  })

  it('null value (tombstone) and a consumed KafkaMessage are accepted', () => {
    expect(() => record1({ topic: 't', messages: [{ key: 'k', value: null }] })).not.toThrow()
    const consumed = {
      key: Buffer.from('k'),
      value: Buffer.from('v'),
      timestamp: '1700000000000',
      attributes: 0,
      offset: '41',
      size: 0,
      headers: { a: Buffer.from('1'), b: [Buffer.from('2'), Buffer.from('3')] },
      isControlRecord: false,
      batchContext: {},
      magicByte: 2,
    }
    const [m] = record1({ topic: 't', messages: [consumed] })
    expect(m!.timestamp).toBe(1700000000000)
    expect(m!.headers.map(([k, v]) => [k, v.toString()])).toEqual([
      ['a', '1'],
      ['b', '2'],
      ['b', '3'],
    ])
  })
})

describe('topic names', () => {
  it.each(['a', 'MetadataChangeLog_Versioned_v1', 'x.y-z_9', '...', 'a'.repeat(249)])('accepts %s', (name) => {
    expect(() => validateTopicName(name)).not.toThrow()
  })
  it.each([
    ['.', '"." and ".." are not allowed'],
    ['..', '"." and ".." are not allowed'],
    ['a'.repeat(250), 'longer than 249 characters (250)'],
    ['has space', 'only ASCII letters'],
    ['tópico', 'only ASCII letters'],
    ['a/b', 'only ASCII letters'],
  ])('rejects %s', (name, message) => {
    expect(errorOf(() => validateTopicName(name)).message).toContain(message)
    expect(errorOf(send({ topic: name, messages: [{ value: 'x' }] })).message).toContain(message)
  })
  it('rejects non-strings', () => {
    expect(errorOf(() => validateTopicName(42)).message).toBe('Invalid topic name: expected a string, got number 42')
  })
})

describe('strict message checks', () => {
  const bad = (message: object) => errorOf(send({ topic: 'orders', messages: [{ value: 'ok' }, message] })).message
  it('key and value types', () => {
    expect(bad({ value: 5 })).toBe('Invalid value in message 1 for topic "orders": expected a string, Buffer or null, got number 5')
    expect(bad({ value: new Uint8Array(2) })).toContain('got Uint8Array')
    expect(bad({ value: 'v', key: 12 })).toBe(
      'Invalid key in message 1 for topic "orders": expected a string, Buffer, null or undefined, got number 12',
    )
    expect(bad({ value: 'v', key: {} })).toContain('got object')
  })
  it('headers', () => {
    expect(bad({ value: 'v', headers: 'x' })).toContain('Invalid headers in message 1 for topic "orders"')
    expect(bad({ value: 'v', headers: [['a', 'b']] })).toContain('got array')
    expect(bad({ value: 'v', headers: new Map() })).toContain('got Map')
    expect(bad({ value: 'v', headers: { n: 1 } })).toBe(
      'Invalid header "n" in message 1 for topic "orders": expected a string, Buffer or an array of them, got number 1',
    )
    expect(bad({ value: 'v', headers: { n: ['a', { x: 1 }] } })).toContain('Invalid header "n"')
  })
  it('partition, priority, timestamp', () => {
    expect(bad({ value: 'v', partition: -1 })).toContain('Invalid partition')
    expect(bad({ value: 'v', partition: 1.5 })).toContain('Invalid partition')
    expect(bad({ value: 'v', partition: '1' })).toContain('Invalid partition')
    expect(bad({ value: 'v', priority: 10 })).toContain(
      'Invalid priority in message 1 for topic "orders": expected an integer from 0 to 9, got number 10',
    )
    expect(bad({ value: 'v', priority: 2.5 })).toContain('Invalid priority')
    expect(bad({ value: 'v', timestamp: 'yesterday' })).toContain('Invalid timestamp')
    expect(bad({ value: 'v', timestamp: -5 })).toContain('Invalid timestamp')
    expect(bad({ value: 'v', timestamp: '1e3' })).toContain('Invalid timestamp')
    expect(bad({ value: 'v', timestamp: new Date() })).toContain('Invalid timestamp')
  })
  it('size limit counts key, value and headers', () => {
    const msg = { key: 'kk', value: Buffer.alloc(5), headers: { h: 'vvv' } } // 2 + 5 + 1 + 3 = 11
    expect(() => record1({ topic: 't', messages: [msg] }, { maxMessageBytes: 11 })).not.toThrow()
    expect(errorOf(() => record1({ topic: 't', messages: [msg] }, { maxMessageBytes: 10 })).message).toBe(
      'Message too large in message 0 for topic "t": 11 bytes (key + value + headers) exceeds the maximum of 10 bytes',
    )
    expect(errorOf(send({ topic: 't', messages: [{ value: Buffer.alloc(DEFAULT_MAX_MESSAGE_BYTES + 1) }] })).message).toContain('Message too large')
  })
  it('rejects the whole batch when any topic has a bad message', () => {
    expect(() =>
      normalizeProducerBatch([
        { topic: 'a', messages: [{ value: 'fine' }] },
        { topic: 'b', messages: [{ value: 'v', partition: -2 }] },
      ]),
    ).toThrow('Invalid partition in message 0 for topic "b"')
  })
})

describe('normalizeMessage', () => {
  it('converts to bytes, keeps header order, drops null/undefined header values, defaults priority', () => {
    const m = normalizeMessage('t', {
      key: 'ключ',
      value: Buffer.from([1, 2]),
      headers: { b: 'x', a: [Buffer.from('1'), undefined, 'two'], skip: undefined, nul: null },
      partition: 3,
      timestamp: '42',
    })
    expect(m.key!.toString('utf8')).toBe('ключ')
    expect([...m.value!]).toEqual([1, 2])
    expect(m.headers.map(([k, v]) => `${k}=${v.toString()}`)).toEqual(['b=x', 'a=1', 'a=two'])
    expect(m).toMatchObject({ partition: 3, timestamp: 42, priority: 5 })
    const bare = normalizeMessage('t', { value: null, key: undefined, priority: 0 })
    expect(bare).toEqual({ key: null, value: null, headers: [], priority: 0, sizeBytes: 0 })
    expect('partition' in bare || 'timestamp' in bare).toBe(false)
  })
})

describe('groupId / clientId', () => {
  it('groupId', () => {
    expect(errorOf(() => validateGroupId('')).message).toBe('Consumer groupId must be a non-empty string.')
    expect(errorOf(() => validateGroupId(undefined)).message).toBe('Consumer groupId must be a non-empty string.')
    expect(errorOf(() => validateGroupId(7)).message).toBe('Consumer groupId must be a non-empty string.')
    expect(errorOf(() => validateGroupId('g'.repeat(256))).message).toContain('at most 255')
    expect(errorOf(() => validateGroupId('a\nb')).message).toContain('control characters')
    expect(() => validateGroupId('generic-mae-consumer-job-client')).not.toThrow()
  })
  it('clientId', () => {
    expect(() => validateClientId(undefined)).not.toThrow()
    expect(() => validateClientId('my-app')).not.toThrow()
    expect(errorOf(() => validateClientId(1)).message).toContain('expected a string')
    expect(errorOf(() => validateClientId('a\u0007')).message).toContain('control characters')
  })
})

// ---- property tests ----

const topicArb = fc.oneof(
  fc.stringMatching(/^[a-zA-Z0-9._-]{1,30}$/).filter((t) => t !== '.' && t !== '..'),
  fc.anything(),
)
const bytesArb = fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a))
const textArb = fc.string({ unit: 'grapheme', maxLength: 20 })
const validHeaderValue = fc.oneof(textArb, bytesArb)
const validMessageArb = fc.record(
  {
    key: fc.oneof(textArb, bytesArb, fc.constant(null), fc.constant(undefined)),
    value: fc.oneof(textArb, bytesArb, fc.constant(null)),
    headers: fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(validHeaderValue, fc.array(validHeaderValue, { maxLength: 3 }))),
    partition: fc.nat({ max: 1000 }),
    priority: fc.integer({ min: 0, max: 9 }),
    timestamp: fc.oneof(fc.nat().map(String), fc.nat()),
  },
  { requiredKeys: ['value'] },
)
const wildArb = fc.anything({
  withBigInt: true,
  withNullPrototype: true,
  withBoxedValues: true,
  withMap: true,
  withSet: true,
  withTypedArray: true,
  withDate: true,
  withSparseArray: true,
})
const anyMessageArb = fc.oneof(
  validMessageArb,
  wildArb,
  fc.record({ key: wildArb, value: wildArb, headers: wildArb, partition: wildArb, priority: wildArb, timestamp: wildArb }, { requiredKeys: [] }),
  validMessageArb.chain((m) =>
    fc
      .record({ field: fc.constantFrom('key', 'value', 'headers', 'partition', 'priority', 'timestamp'), junk: wildArb })
      .map(({ field, junk }) => ({ ...m, [field]: junk })),
  ),
)

const asBytes = (v: string | Buffer) => (typeof v === 'string' ? Buffer.from(v, 'utf8') : v)

describe('properties', () => {
  it('validation only ever throws KafkaJS errors', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.record({ topic: topicArb, messages: fc.oneof(fc.array(anyMessageArb, { maxLength: 4 }), wildArb) }, { requiredKeys: [] }),
          wildArb,
        ),
        (record) => {
          try {
            record1(record as never, { maxMessageBytes: 200 })
          } catch (e) {
            // the one exception is KafkaJS's own: a null/undefined message fails reading its `.value`
            const messages = (record as { messages?: unknown } | null)?.messages
            if (e instanceof TypeError && Array.isArray(messages) && Array.from(messages).some((m) => m == null)) return
            expect(e).toBeInstanceOf(KafkaJSError)
            expect((e as KafkaJSError).retriable).toBe(false)
          }
        },
      ),
      { numRuns: runs(2000) },
    )
  })

  it('valid messages are accepted and normalised losslessly', () => {
    fc.assert(
      fc.property(fc.array(validMessageArb, { minLength: 1, maxLength: 5 }), (messages) => {
        const out = record1({ topic: 'prop_topic', messages })
        expect(out).toHaveLength(messages.length)
        messages.forEach((m, i) => {
          const n = out[i]!
          expect(n.key).toEqual(m.key === undefined || m.key === null ? null : asBytes(m.key))
          expect(n.value).toEqual(m.value === null ? null : asBytes(m.value))
          if (typeof m.key === 'string') expect(n.key!.toString('utf8')).toBe(m.key)
          if (typeof m.value === 'string') expect(n.value!.toString('utf8')).toBe(m.value)
          const expectedHeaders = Object.entries(m.headers ?? {}).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => [k, asBytes(x)]))
          expect(n.headers).toEqual(expectedHeaders)
          expect(n.partition).toBe(m.partition)
          expect(n.priority).toBe(m.priority ?? 5)
          expect(n.timestamp).toBe(m.timestamp === undefined ? undefined : Number(m.timestamp))
        })
      }),
      { numRuns: runs(500) },
    )
  })
})
