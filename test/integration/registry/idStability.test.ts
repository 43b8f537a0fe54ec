// A schema id never changes meaning (issue #25 item 3): a referenced version cannot be deleted permanently while any
// referrer exists, soft-deleted included, and a subject never hands out a version number twice.
import { describe, expect, it } from 'vitest'
import { uniqueName } from '../../helpers/kafka.js'
import { useRegistry } from './helpers.js'

const f = useRegistry('reg_id_stability')
const address = (fields: Array<{ name: string; type: string }>) => JSON.stringify({ type: 'record', name: 'Address', namespace: 'geo', fields })
const person = JSON.stringify({ type: 'record', name: 'Person', namespace: 'geo', fields: [{ name: 'home', type: 'geo.Address' }] })

describe('schema ids keep their meaning', () => {
  it('refuses to delete permanently a version that a soft-deleted schema references; its number is never reused', async () => {
    const addr = uniqueName('addr')
    const people = uniqueName('person')
    await f.api('POST', `/subjects/${addr}/versions`, { schema: address([{ name: 'city', type: 'string' }]) })
    const references = [{ name: 'geo.Address', subject: addr, version: 1 }]
    const { id } = (await f.api('POST', `/subjects/${people}/versions`, { schema: person, references })).body
    expect((await f.api('DELETE', `/subjects/${people}`)).status).toBe(200) // soft: id still resolves

    // soft-deleting addr is fine (the only referrer is soft-deleted); deleting it for good is not
    expect((await f.api('DELETE', `/subjects/${addr}/versions/1`)).status).toBe(200)
    const refused = await f.api('DELETE', `/subjects/${addr}/versions/1?permanent=true`)
    expect(refused).toMatchObject({ status: 422, body: { error_code: 42206 } })
    expect(await f.api('DELETE', `/subjects/${addr}?permanent=true`)).toMatchObject({ status: 422, body: { error_code: 42206 } })

    // a different Address under the subject gets version 2, so (addr, 1) still means the original
    const other = await f.api('POST', `/subjects/${addr}/versions`, { schema: address([{ name: 'zip', type: 'int' }]) })
    expect(other.status).toBe(200)
    expect((await f.api('GET', `/subjects/${addr}/versions`)).body).toEqual([2])
    const byId = (await f.api('GET', `/schemas/ids/${id}`)).body
    expect(byId.references).toEqual(references)
    expect((await f.api('GET', `/subjects/${addr}/versions/1/schema?deleted=true`)).body).toMatchObject({
      fields: [{ name: 'city', type: 'string' }],
    })

    // once the referrer is gone for good, the referenced version may go too, and its number stays used
    expect((await f.api('DELETE', `/subjects/${people}?permanent=true`)).status).toBe(200)
    expect((await f.api('DELETE', `/subjects/${addr}/versions/1?permanent=true`)).status).toBe(200)
    await f.api('DELETE', `/subjects/${addr}/versions/2`)
    await f.api('DELETE', `/subjects/${addr}/versions/2?permanent=true`)
    await f.api('POST', `/subjects/${addr}/versions`, { schema: address([{ name: 'street', type: 'string' }]) })
    expect((await f.api('GET', `/subjects/${addr}/versions`)).body).toEqual([3])
  })
})

describe('schema identity by full name', () => {
  it('"ns.R" and name R + namespace ns register as one schema: same id, same version', async () => {
    const s = uniqueName('fullname')
    const dotted = JSON.stringify({ type: 'record', name: 'ns.R', fields: [{ name: 'a', type: 'int' }] })
    const split = JSON.stringify({ type: 'record', name: 'R', namespace: 'ns', fields: [{ name: 'a', type: 'int' }] })
    const first = (await f.api('POST', `/subjects/${s}/versions`, { schema: dotted })).body
    const second = (await f.api('POST', `/subjects/${s}/versions`, { schema: split })).body
    expect(second).toEqual(first)
    expect((await f.api('GET', `/subjects/${s}/versions`)).body).toEqual([1])
    expect((await f.api('POST', `/subjects/${s}`, { schema: split })).body).toMatchObject({ version: 1, id: first.id })
  })
})
