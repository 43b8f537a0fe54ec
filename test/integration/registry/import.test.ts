// Confluent's IMPORT mode through the HTTP API on PostgreSQL: registrations keep the id and version they bring,
// IMPORT needs an empty scope (or force), READWRITE refuses ids and IMPORT refuses registrations without one.
// Tests run in order: the first needs the file's registry still empty.
import { describe, expect, it } from 'vitest'
import { uniqueName } from '../../helpers/kafka.js'
import { record, useRegistry } from './helpers.js'

const f = useRegistry('reg_import')
const post = (s: string, body: object) => f.api('POST', `/subjects/${s}/versions`, body)

describe('registry IMPORT mode', () => {
  it('global IMPORT on an empty registry: ids and versions are kept, in any order, without compatibility checks', async () => {
    const s = uniqueName('imp')
    expect((await f.api('PUT', '/mode', { mode: 'import' })).body).toEqual({ mode: 'IMPORT' })
    try {
      expect((await f.api('GET', '/mode')).body).toEqual({ mode: 'IMPORT' })
      expect(await post(s, { schema: record('I'), id: 700, version: 3 })).toMatchObject({ status: 200, body: { id: 700 } })
      // version 1 after 3, and a type change BACKWARD would refuse
      const changed = record('I', [], 'test.ns').replace('"int"', '"string"')
      expect(await post(s, { schema: changed, id: 42, version: 1 })).toMatchObject({ status: 200, body: { id: 42 } })
      expect((await f.api('GET', `/subjects/${s}/versions`)).body).toEqual([1, 3])
      expect((await f.api('GET', `/subjects/${s}/versions/3`)).body).toMatchObject({ subject: s, version: 3, id: 700 })
      expect((await f.api('GET', `/schemas/ids/42`)).body.schema).toContain('"string"')
      // no version: the next after the highest
      expect((await post(s, { schema: record('I', [{ name: 'b', type: 'int', default: 0 }]), id: 701 })).body).toEqual({ id: 701 })
      expect((await f.api('GET', `/subjects/${s}/versions/latest`)).body).toMatchObject({ version: 4, id: 701 })
      // registrations without an id are refused in IMPORT, as in Confluent
      const plain = await post(uniqueName('plain'), { schema: record('P') })
      expect(plain).toMatchObject({ status: 422, body: { error_code: 42205 } })
      expect(plain.body.message).toContain('not in read-write mode')
    } finally {
      expect((await f.api('PUT', '/mode', { mode: 'READWRITE' })).body).toEqual({ mode: 'READWRITE' })
    }
    // back in READWRITE: ids are drawn above the imported ones, versions continue after the highest
    const next = await post(s, {
      schema: record('I', [
        { name: 'b', type: 'int', default: 0 },
        { name: 'c', type: 'int', default: 0 },
      ]),
    })
    expect(next.status).toBe(200)
    expect(next.body.id).toBeGreaterThan(701)
    expect((await f.api('GET', `/subjects/${s}/versions/latest`)).body.version).toBe(5)
    const withId = await post(s, { schema: record('Z'), id: 900 })
    expect(withId).toMatchObject({ status: 422, body: { error_code: 42205 } })
    expect(withId.body.message).toContain('not in import mode')
  })

  it('refuses to overwrite: an id holding another schema, a schema under another id, a taken version; a repeat is idempotent', async () => {
    const s = uniqueName('strict')
    expect((await f.api('PUT', `/mode/${s}`, { mode: 'IMPORT' })).body).toEqual({ mode: 'IMPORT' })
    expect((await post(s, { schema: record('S'), id: 800, version: 1 })).body).toEqual({ id: 800 })
    expect((await post(s, { schema: record('S'), id: 800, version: 1 })).body).toEqual({ id: 800 })
    expect((await post(s, { schema: record('S'), id: 800 })).body).toEqual({ id: 800 }) // already live: same version
    expect((await f.api('GET', `/subjects/${s}/versions`)).body).toEqual([1])

    const overwrite = await post(s, { schema: record('Other'), id: 800, version: 2 })
    expect(overwrite).toMatchObject({ status: 422, body: { error_code: 42205 } })
    expect(overwrite.body.message).toContain('Overwrite new schema with id 800')
    const twoIds = await post(s, { schema: record('S'), id: 801, version: 2 })
    expect(twoIds).toMatchObject({ status: 422, body: { error_code: 42205 } })
    expect(twoIds.body.message).toContain('already stored with id 800')
    const taken = await post(s, { schema: record('T'), id: 802, version: 1 })
    expect(taken).toMatchObject({ status: 422, body: { error_code: 42205 } })
    expect(taken.body.message).toContain('Version 1')
    // nothing of the refused registrations was stored
    expect(await f.api('GET', '/schemas/ids/802')).toMatchObject({ status: 404, body: { error_code: 40403 } })
    expect(await post(s, { schema: record('T'), id: -1 })).toMatchObject({ status: 422, body: { error_code: 42205 } })
    expect(await post(s, { schema: record('T'), id: 'x' })).toMatchObject({ status: 422, body: { error_code: 42201 } })
  })

  it('IMPORT on a subject: refused while it has live versions unless forced; its soft-deleted versions are removed', async () => {
    const live = uniqueName('live')
    await post(live, { schema: record('L') })
    const refused = await f.api('PUT', `/mode/${live}`, { mode: 'IMPORT' })
    expect(refused).toMatchObject({ status: 422, body: { error_code: 42205 } })
    expect(refused.body.message).toContain('Cannot import since found existing subjects')
    expect(await f.api('GET', `/mode/${live}`)).toMatchObject({ status: 404 })
    expect((await f.api('PUT', `/mode/${live}?force=true`, { mode: 'IMPORT' })).body).toEqual({ mode: 'IMPORT' })
    expect((await f.api('GET', `/subjects/${live}/versions`)).body).toEqual([1]) // force keeps what is there
    expect((await post(live, { schema: record('L', [{ name: 'b', type: 'string' }]), id: 850 })).body).toEqual({ id: 850 })
    expect((await f.api('GET', `/subjects/${live}/versions`)).body).toEqual([1, 2])

    const soft = uniqueName('soft')
    await post(soft, { schema: record('D') })
    await f.api('DELETE', `/subjects/${soft}`)
    expect((await f.api('PUT', `/mode/${soft}`, { mode: 'IMPORT' })).body).toEqual({ mode: 'IMPORT' })
    expect(await f.api('GET', `/subjects/${soft}/versions?deleted=true`)).toMatchObject({ status: 404, body: { error_code: 40401 } })
    // an id registered with READONLY in scope: read-only wins
    expect((await f.api('PUT', `/mode/${soft}`, { mode: 'READONLY' })).body).toEqual({ mode: 'READONLY' })
    const ro = await post(soft, { schema: record('D'), id: 860 })
    expect(ro).toMatchObject({ status: 422, body: { error_code: 42205 } })
    expect(ro.body.message).toContain('read-only')
  })

  it('IMPORT is refused (42206) while a soft-deleted version of the subject is still referenced', async () => {
    const addr = uniqueName('addr')
    const person = uniqueName('person')
    const a = JSON.stringify({ type: 'record', name: 'Address', namespace: 'geo', fields: [{ name: 'city', type: 'string' }] })
    await post(addr, { schema: a })
    const p = JSON.stringify({ type: 'record', name: 'Person', fields: [{ name: 'home', type: 'geo.Address' }] })
    expect((await post(person, { schema: p, references: [{ name: 'geo.Address', subject: addr, version: 1 }] })).status).toBe(200)
    await f.api('DELETE', `/subjects/${person}`)
    await f.api('DELETE', `/subjects/${addr}`)
    expect(await f.api('PUT', `/mode/${addr}`, { mode: 'IMPORT' })).toMatchObject({ status: 422, body: { error_code: 42206 } })
    expect((await f.api('GET', `/subjects/${addr}/versions?deleted=true`)).body).toEqual([1])
  })

  it('global IMPORT on a registry with live subjects is refused (42205), and allowed with force', async () => {
    const refused = await f.api('PUT', '/mode', { mode: 'IMPORT' })
    expect(refused).toMatchObject({ status: 422, body: { error_code: 42205 } })
    expect((await f.api('GET', '/mode')).body).toEqual({ mode: 'READWRITE' })
    const own = uniqueName('own')
    await f.api('PUT', `/mode/${own}`, { mode: 'READWRITE' })
    expect((await f.api('PUT', '/mode?force=true', { mode: 'IMPORT' })).body).toEqual({ mode: 'IMPORT' })
    try {
      expect((await post(uniqueName('g'), { schema: record('G'), id: 950 })).body).toEqual({ id: 950 })
      // a subject's own mode wins over the global one
      expect(await post(own, { schema: record('G2'), id: 951 })).toMatchObject({ status: 422, body: { error_code: 42205 } })
      expect((await post(own, { schema: record('G2') })).status).toBe(200)
    } finally {
      await f.api('PUT', '/mode', { mode: 'READWRITE' })
    }
  })

  it('READWRITE accepts a version only when it is the next one (42201 otherwise), registering the schema again', async () => {
    const s = uniqueName('ver')
    await post(s, { schema: record('V') })
    const skip = await post(s, { schema: record('V', [{ name: 'b', type: 'int', default: 0 }]), version: 3 })
    expect(skip).toMatchObject({ status: 422, body: { error_code: 42201 } })
    const again = await post(s, { schema: record('V'), version: 2 })
    expect(again.status).toBe(200)
    expect((await f.api('GET', `/subjects/${s}/versions/2`)).body.id).toBe(again.body.id)
    expect((await f.api('GET', `/subjects/${s}/versions`)).body).toEqual([1, 2])
  })

  it('a generated id that an import took behind the sequence is skipped, not a duplicate-key failure', async () => {
    const first = (await post(uniqueName('seq'), { schema: record('Q1') })).body.id as number
    const imp = uniqueName('seqimp')
    await f.api('PUT', `/mode/${imp}`, { mode: 'IMPORT' })
    await post(imp, { schema: record('Q2'), id: first + 1 })
    await post(imp, { schema: record('Q3'), id: first + 2 })
    // another process's import moved the sequence back under them (setval is not transactional)
    const { rows } = await f.t.db.pool.query(
      `SELECT pg_get_serial_sequence(quote_ident(table_schema) || '.' || quote_ident(table_name), 'id') AS seq
       FROM information_schema.tables WHERE table_schema = $1 AND table_name LIKE '%\\_schema'`,
      [f.t.db.schema],
    )
    await f.t.db.pool.query('SELECT setval($1::regclass, $2)', [rows[0].seq, first])
    const drawn = await post(uniqueName('seq'), { schema: record('Q4') })
    expect(drawn).toMatchObject({ status: 200, body: { id: first + 3 } })
  })
})
