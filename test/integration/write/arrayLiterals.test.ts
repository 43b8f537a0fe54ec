// The enqueue statement's array parameters are built by src/store/arrayLiterals.ts instead of node-postgres: every
// value must come out of PostgreSQL's array parser exactly as it went in.
import { describe, expect, it } from 'vitest'
import { byteaArray, integerArray, textArray } from '../../../src/store/arrayLiterals.js'
import { useTestSchema } from '../../helpers/db.js'

const db = useTestSchema('array_literals')

describe('array literals', () => {
  it('text: quotes, backslashes, braces, commas, NULL as a word, spaces, unicode, empty, null', async () => {
    const values = [
      '',
      'plain',
      'a"b',
      'a\\b',
      '\\"',
      '"',
      '\\',
      '{x,y}',
      'a,b',
      'NULL',
      'null',
      ' lead',
      'trail ',
      'ü€😀',
      '[{"key":"k","v":"dg=="}]',
      null,
    ]
    const res = await db.pool.query<{ v: string | null }>('SELECT unnest($1::text[]) AS v', [textArray(values)])
    expect(res.rows.map((r) => r.v)).toEqual(values)
  })

  it('bytea: any bytes, empty, null', async () => {
    const values = [Buffer.from([0, 1, 0xff, 0x5c, 0x22]), Buffer.alloc(0), null, Buffer.from('x')]
    const res = await db.pool.query<{ v: string | null }>("SELECT encode(unnest($1::bytea[]), 'hex') AS v", [byteaArray(values)])
    expect(res.rows.map((r) => r.v)).toEqual(values.map((b) => (b === null ? null : b.toString('hex'))))
  })

  it('integers: negative, zero, large int8, null', async () => {
    const values = [0, -1, 5, 2147483647, 1764600000123, Number.MAX_SAFE_INTEGER, null]
    const res = await db.pool.query<{ v: string | null }>('SELECT unnest($1::int8[])::text AS v', [integerArray(values)])
    expect(res.rows.map((r) => r.v)).toEqual(values.map((v) => (v === null ? null : String(v))))
  })
})
