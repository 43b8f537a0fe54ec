import avro from 'avsc'
import { describe, expect, it } from 'vitest'
import { compatibilityProblems, parseCompatibilityLevel } from '../../../src/registry/compatibility.js'
import { SchemaRegistryError } from '../../../src/registry/errors.js'

const rec = (fields: object[]) =>
  avro.Type.forSchema({ type: 'record', name: 'U', namespace: 'n', fields: [{ name: 'a', type: 'int' }, ...fields] } as avro.Schema)
const v1 = rec([])
const addedRequired = rec([{ name: 'b', type: 'string' }]) // old data lacks b: not backward
const addedOptional = rec([{ name: 'b', type: 'string', default: '' }]) // backward and forward
const history = (...types: avro.Type[]) => types.map((type, i) => ({ version: i + 1, type }))

describe('compatibilityProblems', () => {
  it('BACKWARD: the new schema must read the latest version', () => {
    expect(compatibilityProblems('BACKWARD', addedOptional, history(v1))).toEqual([])
    const problems = compatibilityProblems('BACKWARD', addedRequired, history(v1))
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/^BACKWARD: .*version 1: .*b/)
  })

  it('FORWARD: the latest version must read the new schema', () => {
    expect(compatibilityProblems('FORWARD', addedRequired, history(v1))).toEqual([]) // old readers ignore b
    expect(compatibilityProblems('FORWARD', v1, history(addedRequired))[0]).toMatch(/^FORWARD: version 1 cannot read/)
  })

  it('FULL needs both directions; NONE accepts anything', () => {
    expect(compatibilityProblems('FULL', addedOptional, history(v1))).toEqual([])
    expect(compatibilityProblems('FULL', addedRequired, history(v1))).toHaveLength(1)
    const unrelated = avro.Type.forSchema('string')
    expect(compatibilityProblems('FULL', unrelated, history(v1))).toHaveLength(2)
    expect(compatibilityProblems('NONE', unrelated, history(v1))).toEqual([])
  })

  it('plain levels look at the latest version only, transitive ones at all', () => {
    // int promotes to long, not back: a reader with a:int cannot read data written with a:long
    const aLong = avro.Type.forSchema({ type: 'record', name: 'U', namespace: 'n', fields: [{ name: 'a', type: 'long' }] } as avro.Schema)
    // candidate a:int reads v1 (int) fine, fails reading v2 (long)
    expect(compatibilityProblems('BACKWARD', v1, history(aLong))).toHaveLength(1)
    // candidate a:long after [int, long]: reads both
    expect(compatibilityProblems('BACKWARD_TRANSITIVE', aLong, history(v1, aLong))).toEqual([])
    // candidate a:int after [long, int]: latest is int (fine), but version 1 is long
    expect(compatibilityProblems('BACKWARD', v1, history(aLong, v1))).toEqual([])
    const transitive = compatibilityProblems('BACKWARD_TRANSITIVE', v1, history(aLong, v1))
    expect(transitive).toHaveLength(1)
    expect(transitive[0]).toMatch(/version 1/)
  })

  it('an empty subject accepts anything', () => {
    expect(compatibilityProblems('FULL_TRANSITIVE', v1, [])).toEqual([])
  })
})

describe('parseCompatibilityLevel', () => {
  it('accepts the seven levels in any case and refuses others with 42203', () => {
    expect(parseCompatibilityLevel('full_transitive')).toBe('FULL_TRANSITIVE')
    try {
      parseCompatibilityLevel('SIDEWAYS')
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(SchemaRegistryError)
      expect((e as SchemaRegistryError).errorCode).toBe(42203)
      expect((e as SchemaRegistryError).status).toBe(422)
    }
  })
})

// Cases from Avro's schema resolution rules (the specification, and Avro >= 1.10 SchemaCompatibility, which
// Confluent's registry runs): named types match by unqualified name or alias.
describe('compatibilityProblems: Avro name matching, as Confluent', () => {
  const named = (name: string, extra: object = {}) =>
    avro.Type.forSchema({ type: 'record', name, fields: [{ name: 'a', type: 'int' }], ...extra } as avro.Schema)
  const enumOf = (symbols: string[], extra: object = {}) => avro.Type.forSchema({ type: 'enum', name: 'E', symbols, ...extra } as avro.Schema)

  it('accepts a namespace-only change in both directions', () => {
    expect(compatibilityProblems('FULL', named('other.R'), history(named('ns.R')))).toEqual([])
    expect(compatibilityProblems('FULL_TRANSITIVE', named('R'), history(named('ns.R'), named('x.y.R')))).toEqual([])
  })

  it('refuses a renamed record unless the reader lists the old name as an alias', () => {
    expect(compatibilityProblems('BACKWARD', named('ns.S'), history(named('ns.R')))).toHaveLength(1)
    expect(compatibilityProblems('BACKWARD', named('ns.S', { aliases: ['R'] }), history(named('ns.R')))).toEqual([])
  })

  it('enums: a reader with more symbols reads old data; one with fewer needs a default', () => {
    expect(compatibilityProblems('BACKWARD', enumOf(['A', 'B']), history(enumOf(['A'])))).toEqual([])
    expect(compatibilityProblems('BACKWARD', enumOf(['A']), history(enumOf(['A', 'B'])))).toHaveLength(1)
    expect(compatibilityProblems('BACKWARD', enumOf(['A'], { default: 'A' }), history(enumOf(['A', 'B'])))).toEqual([])
  })
})
