// Soft and permanent deletes of subjects and versions, and what stays visible.
import { describe, expect, it } from 'vitest'
import { uniqueName } from '../../helpers/kafka.js'
import { record, useRegistry } from './helpers.js'

const f = useRegistry('reg_deletes')
const V1 = record('Del')
const V2 = record('Del', [{ name: 'b', type: 'int', default: 0 }])
const V3 = record('Del', [
  { name: 'b', type: 'int', default: 0 },
  { name: 'c', type: 'int', default: 0 },
])

async function subjectWith(...schemas: string[]): Promise<{ s: string; ids: number[] }> {
  const s = uniqueName('del')
  const ids: number[] = []
  for (const schema of schemas) ids.push((await f.api('POST', `/subjects/${s}/versions`, { schema })).body.id)
  return { s, ids }
}

describe('deleting a subject', () => {
  it('soft-deletes, hides, then removes permanently', async () => {
    const { s, ids } = await subjectWith(V1, V2)
    expect(await f.api('DELETE', `/subjects/${s}?permanent=true`)).toMatchObject({ status: 404, body: { error_code: 40405 } })
    expect((await f.api('DELETE', `/subjects/${s}`)).body).toEqual([1, 2])
    expect(await f.api('DELETE', `/subjects/${s}`)).toMatchObject({ status: 404, body: { error_code: 40404 } })

    // hidden unless ?deleted=true
    expect((await f.api('GET', '/subjects')).body).not.toContain(s)
    expect((await f.api('GET', '/subjects?deleted=true')).body).toContain(s)
    expect((await f.api('GET', `/subjects/${s}/versions`)).body.error_code).toBe(40401)
    expect((await f.api('GET', `/subjects/${s}/versions?deleted=true`)).body).toEqual([1, 2])
    expect((await f.api('GET', `/subjects/${s}/versions/1`)).body.error_code).toBe(40401)
    expect((await f.api('GET', `/subjects/${s}/versions/1?deleted=true`)).body).toMatchObject({ version: 1, id: ids[0] })
    expect((await f.api('POST', `/subjects/${s}`, { schema: V1 })).body.error_code).toBe(40401)
    expect((await f.api('POST', `/subjects/${s}?deleted=true`, { schema: V1 })).body).toMatchObject({ version: 1 })
    // ids stay resolvable for consumers of old messages
    expect((await f.api('GET', `/schemas/ids/${ids[0]}`)).status).toBe(200)
    expect((await f.api('GET', `/schemas/ids/${ids[0]}/subjects`)).body).toEqual([])
    expect((await f.api('GET', `/schemas/ids/${ids[0]}/subjects?deleted=true`)).body).toEqual([s])

    expect((await f.api('DELETE', `/subjects/${s}?permanent=true`)).body).toEqual([1, 2])
    expect((await f.api('GET', '/subjects?deleted=true')).body).not.toContain(s)
    expect((await f.api('DELETE', `/subjects/${s}?permanent=true`)).body.error_code).toBe(40401)
    expect((await f.api('GET', `/schemas/ids/${ids[0]}`)).body.error_code).toBe(40403)
  })

  it('numbers versions past soft- and permanently deleted ones; re-registration after a permanent delete keeps the id', async () => {
    const { s, ids } = await subjectWith(V1)
    await f.api('DELETE', `/subjects/${s}`)
    const again = await f.api('POST', `/subjects/${s}/versions`, { schema: V1 })
    expect(again.body.id).toBe(ids[0])
    expect((await f.api('GET', `/subjects/${s}/versions`)).body).toEqual([2])
    await f.api('DELETE', `/subjects/${s}`)
    await f.api('DELETE', `/subjects/${s}?permanent=true`)
    expect((await f.api('POST', `/subjects/${s}/versions`, { schema: V1 })).body.id).toBe(ids[0])
    // never version 1 again: a schema that referenced (s, 1) must keep meaning what it meant
    expect((await f.api('GET', `/subjects/${s}/versions`)).body).toEqual([3])
  })

  it('drops the subject config with a permanent delete only', async () => {
    const { s } = await subjectWith(V1)
    await f.api('PUT', `/config/${s}`, { compatibility: 'FULL' })
    await f.api('DELETE', `/subjects/${s}`)
    expect((await f.api('GET', `/config/${s}`)).body).toEqual({ compatibilityLevel: 'FULL' })
    await f.api('DELETE', `/subjects/${s}?permanent=true`)
    expect((await f.api('GET', `/config/${s}`)).body.error_code).toBe(40408)
  })
})

describe('deleting a version', () => {
  it('soft-deletes one version (latest = newest live), then permanently', async () => {
    const { s } = await subjectWith(V1, V2, V3)
    expect((await f.api('DELETE', `/subjects/${s}/versions/latest`)).body).toBe(3)
    expect((await f.api('GET', `/subjects/${s}/versions`)).body).toEqual([1, 2])
    expect((await f.api('GET', `/subjects/${s}/versions/latest`)).body.version).toBe(2)
    expect((await f.api('GET', `/subjects/${s}/versions/3`)).body.error_code).toBe(40402)
    expect((await f.api('GET', `/subjects/${s}/versions/3?deleted=true`)).body.version).toBe(3)
    expect((await f.api('GET', `/subjects/${s}/versions/latest?deleted=true`)).body.version).toBe(3)

    expect(await f.api('DELETE', `/subjects/${s}/versions/3`)).toMatchObject({ status: 404, body: { error_code: 40406 } })
    expect(await f.api('DELETE', `/subjects/${s}/versions/2?permanent=true`)).toMatchObject({ status: 404, body: { error_code: 40407 } })
    expect((await f.api('DELETE', `/subjects/${s}/versions/3?permanent=true`)).body).toBe(3)
    expect((await f.api('GET', `/subjects/${s}/versions?deleted=true`)).body).toEqual([1, 2])
    expect((await f.api('DELETE', `/subjects/${s}/versions/9`)).body.error_code).toBe(40402)
    expect((await f.api('DELETE', `/subjects/${s}/versions/x`)).body.error_code).toBe(42202)
    expect((await f.api('DELETE', `/subjects/${uniqueName('none')}/versions/1`)).body.error_code).toBe(40401)
  })
})
