import { describe, expect, it } from 'vitest'
import { Router } from '../../../src/registry/http/router.js'
import { parseVersion } from '../../../src/registry/http/routes.js'
import { normalizeBasePath } from '../../../src/registry/http/server.js'
import { decodeWireFormat, encodeWireFormat } from '../../../src/registry/wireFormat.js'

describe('Confluent wire format', () => {
  it('is 0x00, the id as big-endian int32, then the body', () => {
    const out = encodeWireFormat(0x01020304, Buffer.from([9, 8]))
    expect([...out]).toEqual([0, 1, 2, 3, 4, 9, 8])
    expect(decodeWireFormat(out)).toEqual({ schemaId: 0x01020304, body: Buffer.from([9, 8]) })
  })

  it('refuses another magic byte, short input and ids outside int32', () => {
    expect(() => decodeWireFormat(Buffer.from([1, 0, 0, 0, 1]))).toThrow(/magic byte 1/)
    expect(() => decodeWireFormat(Buffer.from([0, 0, 0]))).toThrow(/at least 5/)
    expect(() => encodeWireFormat(2 ** 31, Buffer.alloc(0))).toThrow(RangeError)
  })
})

describe('routing helpers', () => {
  it('matches params after splitting, so an encoded slash stays in the subject', async () => {
    const r = new Router().on('GET', '/subjects/:subject/versions', async () => ({ json: 1 }))
    const m = r.match('GET', '/subjects/a%2Fb/versions')
    expect(m.kind).toBe('found')
    expect(m.kind === 'found' && m.params.subject).toBe('a/b')
    expect(r.match('POST', '/subjects/x/versions').kind).toBe('method-not-allowed')
    expect(r.match('GET', '/subjects/x').kind).toBe('not-found')
  })

  it('parses versions as Confluent does', () => {
    expect(parseVersion('latest')).toBe('latest')
    expect(parseVersion('-1')).toBe('latest')
    expect(parseVersion('7')).toBe(7)
    for (const bad of ['0', '-2', 'x', '2147483648', '1.5']) expect(() => parseVersion(bad)).toThrow(/not a valid version/)
  })

  it('normalises base paths', () => {
    expect(normalizeBasePath('schema-registry/api/')).toBe('/schema-registry/api')
    expect(normalizeBasePath('/')).toBe('')
    expect(normalizeBasePath()).toBe('')
  })
})
