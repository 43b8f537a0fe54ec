// The Confluent REST API over HTTP: paths, bodies, media type and error codes.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { createSchemaRegistryServer } from '../../../src/registry/index.js'
import { uniqueName } from '../../helpers/kafka.js'
import { BASE_PATH, record, useRegistry } from './helpers.js'

const f = useRegistry('reg_api')
const subject = (label: string) => uniqueName(label)
const V1 = record('User')
const V2 = record('User', [{ name: 'b', type: 'string', default: '' }])

describe('basics', () => {
  it('answers GET / with {} in the registry media type, and 404 outside the base path', async () => {
    const root = await f.api('GET', '/')
    expect(root).toMatchObject({ status: 200, body: {}, contentType: 'application/vnd.schemaregistry.v1+json' })
    const origin = f.url().slice(0, -BASE_PATH.length)
    for (const path of ['/subjects', '/schema-registry/apix/subjects', '/']) {
      const res = await fetch(`${origin}${path}`)
      expect(res.status).toBe(404)
      expect(await res.json()).toEqual({ error_code: 404, message: 'HTTP 404 Not Found' })
    }
    expect((await f.api('GET', '/schemas/types')).body).toEqual(['AVRO'])
    expect((await f.api('PATCH', '/subjects')).status).toBe(405)
    expect((await f.api('GET', '/no/such/path')).status).toBe(404)
  })

  it('accepts application/json, refuses other media types (415) and malformed JSON (400)', async () => {
    const s = subject('media')
    expect((await f.api('POST', `/subjects/${s}/versions`, { schema: V1 }, { 'Content-Type': 'application/json' })).status).toBe(200)
    const plain = await f.api('POST', `/subjects/${s}/versions`, { schema: V1 }, { 'Content-Type': 'text/plain' })
    expect(plain).toMatchObject({ status: 415, body: { error_code: 415 } })
    const bad = await f.api('POST', `/subjects/${s}/versions`, '{"schema":')
    expect(bad).toMatchObject({ status: 400, body: { error_code: 400 } })
  })
})

describe('subjects and versions', () => {
  it('registers, re-registers idempotently and shares one id across subjects', async () => {
    const s = subject('users')
    const first = await f.api('POST', `/subjects/${s}/versions`, { schema: V1 })
    expect(first.status).toBe(200)
    expect(Object.keys(first.body)).toEqual(['id'])
    // the same schema with other whitespace and key order: same id, no new version
    const respelled = '{ "fields": [ { "type": {"type": "int"}, "name": "a" } ],\n  "namespace": "test.ns", "name": "User", "type": "record" }'
    expect(JSON.parse(respelled)).not.toEqual(JSON.parse(V1))
    expect((await f.api('POST', `/subjects/${s}/versions`, { schema: respelled })).body).toEqual({ id: first.body.id })
    expect((await f.api('GET', `/subjects/${s}/versions`)).body).toEqual([1])
    const other = subject('users-copy')
    expect((await f.api('POST', `/subjects/${other}/versions`, { schema: V1 })).body).toEqual({ id: first.body.id })
    const second = await f.api('POST', `/subjects/${s}/versions`, { schema: V2 })
    expect(second.body.id).not.toBe(first.body.id)
    expect((await f.api('GET', `/subjects/${s}/versions`)).body).toEqual([1, 2])

    const latest = await f.api('GET', `/subjects/${s}/versions/latest`)
    expect(latest.body).toEqual({ subject: s, version: 2, id: second.body.id, schema: expect.any(String) })
    expect(JSON.parse(latest.body.schema)).toEqual(JSON.parse(V2))
    expect((await f.api('GET', `/subjects/${s}/versions/-1`)).body.version).toBe(2)
    expect((await f.api('GET', `/subjects/${s}/versions/1`)).body).toMatchObject({ version: 1, id: first.body.id })
    const raw = await f.api('GET', `/subjects/${s}/versions/1/schema`)
    expect(raw.body).toEqual(JSON.parse(V1)) // the schema itself, not wrapped

    const all = (await f.api('GET', '/subjects')).body as string[]
    expect(all).toEqual(expect.arrayContaining([s, other]))
    expect((await f.api('GET', `/subjects?subjectPrefix=${s}`)).body).toEqual([s])
    const schemas = (await f.api('GET', `/schemas?subjectPrefix=${s}&latestOnly=true`)).body
    expect(schemas).toEqual([expect.objectContaining({ subject: s, version: 2, id: second.body.id })])
  })

  it('looks a schema up under a subject (POST /subjects/{s})', async () => {
    const s = subject('lookup')
    const { id } = (await f.api('POST', `/subjects/${s}/versions`, { schema: V1 })).body
    const found = await f.api('POST', `/subjects/${s}`, { schema: V1 })
    expect(found).toMatchObject({ status: 200, body: { subject: s, version: 1, id } })
    expect(JSON.parse(found.body.schema)).toEqual(JSON.parse(V1))
    expect((await f.api('POST', `/subjects/${s}`, { schema: V2 })).body).toEqual({ error_code: 40403, message: 'Schema not found' })
    expect((await f.api('POST', `/subjects/${subject('nobody')}`, { schema: V1 })).body.error_code).toBe(40401)
  })

  it('gives 40401, 40402 and 42202 with Confluent statuses', async () => {
    const s = subject('errors')
    await f.api('POST', `/subjects/${s}/versions`, { schema: V1 })
    const missing = await f.api('GET', `/subjects/${subject('missing')}/versions`)
    expect(missing).toMatchObject({ status: 404, body: { error_code: 40401 } })
    expect(await f.api('GET', `/subjects/${s}/versions/9`)).toMatchObject({ status: 404, body: { error_code: 40402 } })
    for (const v of ['0', 'abc', '2147483648']) {
      expect(await f.api('GET', `/subjects/${s}/versions/${v}`)).toMatchObject({ status: 422, body: { error_code: 42202 } })
    }
  })

  it('refuses invalid schemas and non-AVRO types with 42201', async () => {
    const s = subject('invalid')
    const cases: Array<[unknown, RegExp]> = [
      [{ schema: V1, schemaType: 'JSON' }, /JSON is not supported: this registry stores AVRO schemas only/],
      [{ schema: 'syntax = "proto3";', schemaType: 'PROTOBUF' }, /PROTOBUF is not supported/],
      [{ schema: V1, schemaType: 'XML' }, /Invalid schema type "XML"/],
      [{ schema: '{"type":' }, /not valid JSON/],
      [{ schema: '{"type":"record","name":"R","fields":[{"name":"x","type":"nope"}]}' }, /undefined type name: nope/],
      [{}, /"schema" must be a non-empty string/],
      [{ schema: V1, references: [{ name: 'x.Y', subject: 'nowhere', version: 1 }] }, /reference "x.Y" .* does not exist/],
    ]
    for (const [body, message] of cases) {
      const res = await f.api('POST', `/subjects/${s}/versions`, body)
      expect(res.status).toBe(422)
      expect(res.body.error_code).toBe(42201)
      expect(res.body.message).toMatch(message)
    }
    expect((await f.api('GET', `/subjects/${s}/versions`)).body.error_code).toBe(40401) // nothing was stored
  })
})

describe('schemas by id', () => {
  it('returns the schema, its subjects and versions; 40403 for unknown ids', async () => {
    const a = subject('ids-a')
    const b = subject('ids-b')
    const { id } = (await f.api('POST', `/subjects/${a}/versions`, { schema: record('ById') })).body
    await f.api('POST', `/subjects/${b}/versions`, { schema: record('ById') })
    const byId = await f.api('GET', `/schemas/ids/${id}`)
    expect(Object.keys(byId.body)).toEqual(['schema']) // no schemaType for AVRO, no empty references
    expect(JSON.parse(byId.body.schema).name).toBe('ById')
    expect((await f.api('GET', `/schemas/ids/${id}/schema`)).body).toEqual(JSON.parse(record('ById')))
    expect((await f.api('GET', `/schemas/ids/${id}/subjects`)).body).toEqual([a, b].sort())
    expect((await f.api('GET', `/schemas/ids/${id}/versions`)).body).toEqual(
      [
        { subject: a, version: 1 },
        { subject: b, version: 1 },
      ].sort((x, y) => (x.subject < y.subject ? -1 : 1)),
    )
    for (const bad of ['999999', 'abc']) {
      expect(await f.api('GET', `/schemas/ids/${bad}`)).toMatchObject({ status: 404, body: { error_code: 40403 } })
    }
  })
})

describe('references', () => {
  it('resolves referenced named types, reports referencedby and blocks deleting what is referenced', async () => {
    const addrSubject = subject('address')
    const address = JSON.stringify({ type: 'record', name: 'Address', namespace: 'geo', fields: [{ name: 'city', type: 'string' }] })
    await f.api('POST', `/subjects/${addrSubject}/versions`, { schema: address })
    const person = JSON.stringify({ type: 'record', name: 'Person', namespace: 'geo', fields: [{ name: 'home', type: 'geo.Address' }] })
    const references = [{ name: 'geo.Address', subject: addrSubject, version: 1 }]
    const personSubject = subject('person')
    // without the reference the type name is unknown
    expect((await f.api('POST', `/subjects/${personSubject}/versions`, { schema: person })).body.error_code).toBe(42201)
    const { id } = (await f.api('POST', `/subjects/${personSubject}/versions`, { schema: person, references })).body
    expect((await f.api('GET', `/schemas/ids/${id}`)).body.references).toEqual(references)
    expect((await f.api('GET', `/subjects/${personSubject}/versions/1`)).body.references).toEqual(references)
    expect((await f.api('GET', `/subjects/${addrSubject}/versions/1/referencedby`)).body).toEqual([id])
    const refused = await f.api('DELETE', `/subjects/${addrSubject}/versions/1`)
    expect(refused).toMatchObject({ status: 422, body: { error_code: 42206 } })
    // lookup needs the same references to find it
    expect((await f.api('POST', `/subjects/${personSubject}`, { schema: person, references })).body.id).toBe(id)
  })
})

describe('config', () => {
  it('gets and sets the global and subject levels', async () => {
    const s = subject('config')
    expect((await f.api('GET', '/config')).body).toEqual({ compatibilityLevel: 'BACKWARD' })
    expect((await f.api('PUT', '/config', { compatibility: 'FULL' })).body).toEqual({ compatibility: 'FULL' })
    expect((await f.api('GET', '/config')).body).toEqual({ compatibilityLevel: 'FULL' })
    expect((await f.api('PUT', '/config', { compatibility: 'BACKWARD' })).status).toBe(200)
    expect(await f.api('PUT', '/config', { compatibility: 'SIDEWAYS' })).toMatchObject({ status: 422, body: { error_code: 42203 } })
    expect(await f.api('PUT', '/config', {})).toMatchObject({ status: 422, body: { error_code: 42203 } })

    expect(await f.api('GET', `/config/${s}`)).toMatchObject({ status: 404, body: { error_code: 40408 } })
    expect((await f.api('GET', `/config/${s}?defaultToGlobal=true`)).body).toEqual({ compatibilityLevel: 'BACKWARD' })
    expect((await f.api('PUT', `/config/${s}`, { compatibility: 'none' })).body).toEqual({ compatibility: 'NONE' })
    expect((await f.api('GET', `/config/${s}`)).body).toEqual({ compatibilityLevel: 'NONE' })
    expect((await f.api('DELETE', `/config/${s}`)).body).toEqual({ compatibilityLevel: 'NONE' })
    expect((await f.api('GET', `/config/${s}`)).body.error_code).toBe(40408)
    expect((await f.api('DELETE', `/config/${s}`)).body.error_code).toBe(40401)
  })

  it('tests compatibility without registering', async () => {
    const s = subject('compat-endpoint')
    await f.api('POST', `/subjects/${s}/versions`, { schema: V1 })
    const incompatible = record('User', [{ name: 'c', type: 'string' }])
    expect((await f.api('POST', `/compatibility/subjects/${s}/versions/latest`, { schema: V2 })).body).toEqual({ is_compatible: true })
    expect((await f.api('POST', `/compatibility/subjects/${s}/versions/1`, { schema: incompatible })).body).toEqual({ is_compatible: false })
    const verbose = await f.api('POST', `/compatibility/subjects/${s}/versions/latest?verbose=true`, { schema: incompatible })
    expect(verbose.body.is_compatible).toBe(false)
    expect(verbose.body.messages[0]).toMatch(/BACKWARD: the new schema cannot read data written with version 1/)
    expect((await f.api('POST', `/compatibility/subjects/${s}/versions`, { schema: incompatible })).body).toEqual({ is_compatible: false })
    expect((await f.api('POST', `/compatibility/subjects/${subject('none')}/versions`, { schema: V1 })).body).toEqual({ is_compatible: true })
    expect((await f.api('POST', `/compatibility/subjects/${subject('none')}/versions/latest`, { schema: V1 })).body.error_code).toBe(40401)
    expect((await f.api('GET', `/subjects/${s}/versions`)).body).toEqual([1])
  })
})

describe('mounting', () => {
  it('lets an application route to the handler and keep its own paths', async () => {
    const handler = createSchemaRegistryServer({ pool: f.t.db.pool, schema: f.t.db.schema, basePath: '/schema-registry/api/' })
    const server = createServer((req, res) =>
      handler(req, res, () => {
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('app')
      }),
    )
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      expect(await (await fetch(`${origin}/health`)).text()).toBe('app')
      expect(await (await fetch(`${origin}/schema-registry/api/schemas/types`)).json()).toEqual(['AVRO'])
      expect(handler.handles('/schema-registry/api?x=1')).toBe(true)
      expect(handler.handles('/schema-registry/apiv2')).toBe(false)
    } finally {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
      await handler.close()
    }
  })

  it('answers 50001 naming the fix when the registry tables are missing', async () => {
    const errors: unknown[] = []
    const handler = createSchemaRegistryServer({ pool: f.t.db.pool, schema: 'no_such_schema_here', onError: (e) => errors.push(e) })
    const server = createServer(handler)
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/subjects`)
      expect(res.status).toBe(500)
      const body = (await res.json()) as { error_code: number; message: string }
      expect(body.error_code).toBe(50001)
      expect(body.message).toMatch(/schema registry tables are missing in schema "no_such_schema_here": run the migrations/)
      expect(errors).toHaveLength(1)
    } finally {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    }
  })
})
