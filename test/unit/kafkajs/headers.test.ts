import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeHeaderPairs, decodeHeaders, encodeHeaders } from '../../../src/kafkajs/headers.js'
import { normalizeMessage } from '../../../src/kafkajs/messageValidation.js'
import { runs } from '../../helpers/property.js'

describe('encodeHeaders', () => {
  it('matches the DataHub vector', () => {
    expect(encodeHeaders([['traceparent', Buffer.from('00-abc')]])).toBe('[{"key":"traceparent","v":"MDAtYWJj"}]')
  })

  it('is null when empty, keeps order and repeated keys', () => {
    expect(encodeHeaders([])).toBeNull()
    const json = encodeHeaders([
      ['b', Buffer.from('1')],
      ['a', Buffer.from('')],
      ['b', Buffer.from([0xff, 0x00])],
    ])
    expect(JSON.parse(json!)).toEqual([
      { key: 'b', v: 'MQ==' },
      { key: 'a', v: '' },
      { key: 'b', v: '/wA=' },
    ])
  })

  it('encodes a Uint8Array view by its own bytes only', () => {
    const backing = Buffer.from('xxABCxx')
    expect(encodeHeaders([['k', backing.subarray(2, 5)]])).toBe(`[{"key":"k","v":"${Buffer.from('ABC').toString('base64')}"}]`)
  })
})

describe('decodeHeaders', () => {
  it('gives KafkaJS consumer headers: Buffers, repeated keys as arrays in order', () => {
    const headers = decodeHeaders([
      { key: 'a', v: 'MQ==' },
      { key: 'b', v: 'Mg==' },
      { key: 'a', v: 'Mw==' },
      { key: 'a', v: 'NA==' },
    ])
    expect(Object.keys(headers)).toEqual(['a', 'b'])
    expect((headers.a as Buffer[]).map(String)).toEqual(['1', '3', '4'])
    expect(Buffer.isBuffer(headers.b)).toBe(true)
    expect(String(headers.b)).toBe('2')
  })

  it('accepts JSON text as well as parsed jsonb', () => {
    expect(String(decodeHeaders('[{"key":"traceparent","v":"MDAtYWJj"}]').traceparent)).toBe('00-abc')
  })

  it('is tolerant like DataHub readers', () => {
    for (const junk of [null, undefined, 42, 'not json', '{"key":"a"}', { key: 'a', v: 'MQ==' }]) {
      expect(decodeHeaders(junk)).toEqual({})
    }
    const pairs = decodeHeaderPairs([{ v: 'MQ==' }, { key: 'k' }, 'junk', null, [1], { key: 5, v: 7 }])
    expect(pairs.map(([k, v]) => [k, v.toString()])).toEqual([
      ['', '1'],
      ['k', ''],
      ['', ''],
    ])
  })

  it('treats "__proto__" as an ordinary header name', () => {
    const headers = decodeHeaders('[{"key":"__proto__","v":"MQ=="}]')
    expect(Object.getPrototypeOf(headers)).toBe(Object.prototype)
    expect(Object.keys(headers)).toEqual(['__proto__'])
  })

  it('round-trips producer headers through the column (property)', () => {
    const value = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 10 }),
      fc.uint8Array({ maxLength: 10 }).map((a) => Buffer.from(a)),
    )
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(value, fc.array(value, { minLength: 1, maxLength: 3 }))), (input) => {
        const { headers } = normalizeMessage('t', { value: null, headers: input })
        const back = decodeHeaderPairs(JSON.parse(encodeHeaders(headers) ?? 'null'))
        expect(back).toEqual(headers)
        const consumed = decodeHeaders(encodeHeaders(headers))
        for (const [k, v] of Object.entries(input)) {
          const expected = (Array.isArray(v) ? v : [v]).map((x) => Buffer.from(x))
          expect(consumed[k]).toEqual(expected.length === 1 ? expected[0] : expected)
        }
      }),
      { numRuns: runs(300) },
    )
  })
})
