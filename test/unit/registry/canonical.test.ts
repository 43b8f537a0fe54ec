import { describe, expect, it } from 'vitest'
import { canonicalAvroText, schemaHash } from '../../../src/registry/canonical.js'

describe('canonicalAvroText', () => {
  it('gives one text for the same schema written with other whitespace, key order and type spelling', () => {
    const a = {
      type: 'record',
      name: 'User',
      namespace: 'ns',
      fields: [
        { name: 'id', type: 'long' },
        { name: 'n', type: ['null', 'string'], default: null },
      ],
    }
    const b =
      JSON.parse(`{ "fields": [ {"type": {"type":"long"}, "name": "id"}, {"default": null, "name": "n", "type": ["null", {"type": "string"}]} ],
      "namespace": "ns", "name": "User", "type": "record" }`)
    expect(canonicalAvroText(b)).toBe(canonicalAvroText(a))
    expect(canonicalAvroText(a)).toBe(
      '{"type":"record","name":"User","namespace":"ns","fields":[{"name":"id","type":"long"},{"name":"n","type":["null","string"],"default":null}]}',
    )
  })

  it('keeps what changes meaning or readers: defaults, logicalType, custom properties, field and union order', () => {
    const base = { type: 'record', name: 'R', fields: [{ name: 'x', type: 'int', default: 1 }] }
    const otherDefault = { type: 'record', name: 'R', fields: [{ name: 'x', type: 'int', default: 2 }] }
    expect(canonicalAvroText(otherDefault)).not.toBe(canonicalAvroText(base))
    const ts = canonicalAvroText({ type: 'long', logicalType: 'timestamp-millis', 'connect.name': 'ts' })
    expect(JSON.parse(ts)).toEqual({ type: 'long', logicalType: 'timestamp-millis', 'connect.name': 'ts' })
    expect(canonicalAvroText(['null', 'int'])).not.toBe(canonicalAvroText(['int', 'null']))
  })

  it('does not rewrite default values that look like schemas', () => {
    const s = { type: 'record', name: 'R', fields: [{ name: 'm', type: { type: 'map', values: 'string' }, default: { type: 'int' } }] }
    expect(JSON.parse(canonicalAvroText(s)).fields[0].default).toEqual({ type: 'int' })
  })
})

describe('canonicalAvroText full names', () => {
  const field = (type: unknown) => [{ name: 'f', type }]
  it('writes "ns.R" and name R + namespace ns the same way, keeping the usual spelling', () => {
    const usual = { type: 'record', name: 'R', namespace: 'ns', fields: field('int') }
    expect(canonicalAvroText({ type: 'record', name: 'ns.R', fields: field('int') })).toBe(canonicalAvroText(usual))
    expect(canonicalAvroText({ type: 'record', name: 'ns.R', namespace: 'ignored', fields: field('int') })).toBe(canonicalAvroText(usual))
    expect(JSON.parse(canonicalAvroText(usual))).toEqual(usual)
  })

  it('drops a nested namespace equal to the enclosing one and keeps one that differs (the empty one included)', () => {
    const nested = (inner: Record<string, unknown>) => ({
      type: 'record',
      name: 'R',
      namespace: 'ns',
      fields: field({ type: 'enum', symbols: ['A'], ...inner }),
    })
    const inherited = canonicalAvroText(nested({ name: 'E' }))
    expect(canonicalAvroText(nested({ name: 'E', namespace: 'ns' }))).toBe(inherited)
    expect(canonicalAvroText(nested({ name: 'ns.E' }))).toBe(inherited)
    expect(canonicalAvroText(nested({ name: 'E', namespace: 'other' }))).not.toBe(inherited)
    expect(canonicalAvroText(nested({ name: 'E', namespace: '' }))).not.toBe(inherited)
    expect(JSON.parse(canonicalAvroText(nested({ name: 'other.E' }))).fields[0].type).toMatchObject({ name: 'E', namespace: 'other' })
  })
})

describe('schemaHash', () => {
  it('differs by references and type, not by anything else', () => {
    const text = '"string"'
    expect(schemaHash('AVRO', text, [])).toBe(schemaHash('AVRO', text, []))
    expect(schemaHash('AVRO', text, [{ name: 'a.B', subject: 'b', version: 1 }])).not.toBe(schemaHash('AVRO', text, []))
    expect(schemaHash('AVRO', text, [{ name: 'a.B', subject: 'b', version: 2 }])).not.toBe(
      schemaHash('AVRO', text, [{ name: 'a.B', subject: 'b', version: 1 }]),
    )
  })
})
