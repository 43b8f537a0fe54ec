// Confluent's /mode: READWRITE by default, READONLY globally or per subject refuses writes (422, 42205); unknown
// modes are 42204. IMPORT has its own file (import.test.ts).
import { describe, expect, it } from 'vitest'
import { uniqueName } from '../../helpers/kafka.js'
import { record, useRegistry } from './helpers.js'

const f = useRegistry('reg_mode')

describe('registry mode', () => {
  it('READONLY on a subject refuses register and delete there only; DELETE /mode/{s} falls back to the global mode', async () => {
    const s = uniqueName('ro')
    const other = uniqueName('rw')
    expect((await f.api('GET', '/mode')).body).toEqual({ mode: 'READWRITE' })
    await f.api('POST', `/subjects/${s}/versions`, { schema: record('M') })
    expect(await f.api('GET', `/mode/${s}`)).toMatchObject({ status: 404, body: { error_code: 40409 } })
    expect((await f.api('GET', `/mode/${s}?defaultToGlobal=true`)).body).toEqual({ mode: 'READWRITE' })

    expect((await f.api('PUT', `/mode/${s}`, { mode: 'readonly' })).body).toEqual({ mode: 'READONLY' })
    expect((await f.api('GET', `/mode/${s}`)).body).toEqual({ mode: 'READONLY' })
    const v2 = record('M', [{ name: 'b', type: 'int', default: 0 }])
    expect(await f.api('POST', `/subjects/${s}/versions`, { schema: v2 })).toMatchObject({ status: 422, body: { error_code: 42205 } })
    expect(await f.api('DELETE', `/subjects/${s}`)).toMatchObject({ status: 422, body: { error_code: 42205 } })
    expect((await f.api('GET', `/subjects/${s}/versions`)).body).toEqual([1]) // reads still work
    expect((await f.api('POST', `/subjects/${other}/versions`, { schema: v2 })).status).toBe(200)

    expect((await f.api('DELETE', `/mode/${s}`)).body).toEqual({ mode: 'READONLY' })
    expect((await f.api('POST', `/subjects/${s}/versions`, { schema: v2 })).status).toBe(200)
  })

  it('global READONLY applies to every subject without its own mode; unknown modes are refused (42204)', async () => {
    const s = uniqueName('global')
    const own = uniqueName('own')
    await f.api('PUT', `/mode/${own}`, { mode: 'READWRITE' })
    expect((await f.api('PUT', '/mode', { mode: 'READONLY' })).body).toEqual({ mode: 'READONLY' })
    try {
      expect(await f.api('POST', `/subjects/${s}/versions`, { schema: record('G') })).toMatchObject({ status: 422, body: { error_code: 42205 } })
      expect((await f.api('POST', `/subjects/${own}/versions`, { schema: record('G') })).status).toBe(200)
    } finally {
      await f.api('PUT', '/mode', { mode: 'READWRITE' })
    }
    expect(await f.api('PUT', '/mode', { mode: 'SIDEWAYS' })).toMatchObject({ status: 422, body: { error_code: 42204 } })
    expect((await f.api('GET', '/mode')).body).toEqual({ mode: 'READWRITE' })
  })
})
