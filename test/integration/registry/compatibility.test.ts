// Registration refusals per compatibility level (HTTP 409, error_code 409), through the REST API.
import { describe, expect, it } from 'vitest'
import { uniqueName } from '../../helpers/kafka.js'
import { useRegistry } from './helpers.js'

const f = useRegistry('reg_compat')

const schema = (fields: object[]) => JSON.stringify({ type: 'record', name: 'Evt', namespace: 'compat', fields })
const A = { name: 'a', type: 'int' }
const BASE = schema([A])
const ADD_REQUIRED = schema([A, { name: 'b', type: 'string' }]) // old data has no b: breaks BACKWARD
const ADD_OPTIONAL = schema([A, { name: 'b', type: 'string', default: 'x' }]) // fine both ways
const DROP_A = schema([{ name: 'b', type: 'string', default: 'x' }]) // new data has no a (no default): breaks FORWARD
const A_LONG = schema([{ name: 'a', type: 'long' }])

async function subjectAt(level: string | undefined, ...versions: string[]): Promise<string> {
  const s = uniqueName(`compat-${level ?? 'default'}`)
  if (level) expect((await f.api('PUT', `/config/${s}`, { compatibility: level })).status).toBe(200)
  for (const v of versions) expect((await f.api('POST', `/subjects/${s}/versions`, { schema: v })).status).toBe(200)
  return s
}

async function register(s: string, v: string) {
  return f.api('POST', `/subjects/${s}/versions`, { schema: v })
}

function expectRefused(res: { status: number; body: any }, s: string) {
  expect(res.status).toBe(409)
  expect(res.body.error_code).toBe(409)
  expect(res.body.message).toContain(`incompatible with an earlier schema for subject "${s}"`)
}

describe('compatibility levels', () => {
  it('BACKWARD (the default): refuses a new required field, accepts one with a default', async () => {
    const s = await subjectAt(undefined, BASE)
    const refused = await register(s, ADD_REQUIRED)
    expectRefused(refused, s)
    expect(refused.body.message).toMatch(/\(BACKWARD\).*cannot read data written with version 1/)
    expect((await register(s, ADD_OPTIONAL)).status).toBe(200)
    expect((await f.api('GET', `/subjects/${s}/versions`)).body).toEqual([1, 2])
  })

  it('FORWARD: refuses dropping a field old readers need, accepts a new required field', async () => {
    const s = await subjectAt('FORWARD', BASE)
    expectRefused(await register(s, DROP_A), s)
    expect((await register(s, ADD_REQUIRED)).status).toBe(200)
  })

  it('FULL: refuses changes that break either direction', async () => {
    const s = await subjectAt('FULL', BASE)
    expectRefused(await register(s, ADD_REQUIRED), s)
    expectRefused(await register(s, DROP_A), s)
    expect((await register(s, ADD_OPTIONAL)).status).toBe(200)
  })

  it('NONE: accepts anything, even another type', async () => {
    const s = await subjectAt('NONE', BASE)
    expect((await register(s, '"string"')).status).toBe(200)
    expect((await register(s, ADD_REQUIRED)).status).toBe(200)
  })

  it('BACKWARD_TRANSITIVE checks every version, BACKWARD only the latest', async () => {
    // a:long then a:int: reading a:long data as a:int is impossible; only version 1 has a:long
    const plain = await subjectAt('NONE', A_LONG, BASE)
    await f.api('PUT', `/config/${plain}`, { compatibility: 'BACKWARD' })
    expect((await register(plain, schema([A, { name: 'c', type: 'int', default: 0 }]))).status).toBe(200)

    const transitive = await subjectAt('NONE', A_LONG, BASE)
    await f.api('PUT', `/config/${transitive}`, { compatibility: 'BACKWARD_TRANSITIVE' })
    const refused = await register(transitive, schema([A, { name: 'c', type: 'int', default: 0 }]))
    expectRefused(refused, transitive)
    expect(refused.body.message).toMatch(/version 1/)
    expect(refused.body.message).not.toMatch(/version 2/)
  })

  it('FORWARD_TRANSITIVE and FULL_TRANSITIVE check every version too', async () => {
    // version 1 reads a:int; the candidate writes a:long, which version 1 cannot read (version 2 has a:long)
    const forward = await subjectAt('NONE', BASE, A_LONG)
    await f.api('PUT', `/config/${forward}`, { compatibility: 'FORWARD_TRANSITIVE' })
    expectRefused(
      await register(
        forward,
        schema([
          { name: 'a', type: 'long' },
          { name: 'z', type: 'int', default: 0 },
        ]),
      ),
      forward,
    )
    const full = await subjectAt('NONE', BASE, A_LONG)
    await f.api('PUT', `/config/${full}`, { compatibility: 'FULL_TRANSITIVE' })
    expectRefused(
      await register(
        full,
        schema([
          { name: 'a', type: 'long' },
          { name: 'z', type: 'int', default: 0 },
        ]),
      ),
      full,
    )
    await f.api('PUT', `/config/${full}`, { compatibility: 'FULL' })
    expect(
      (
        await register(
          full,
          schema([
            { name: 'a', type: 'long' },
            { name: 'z', type: 'int', default: 0 },
          ]),
        )
      ).status,
    ).toBe(200)
  })

  it('the global level applies to subjects without their own', async () => {
    const s = await subjectAt(undefined, BASE)
    await f.api('PUT', '/config', { compatibility: 'NONE' })
    try {
      expect((await register(s, '"string"')).status).toBe(200)
    } finally {
      await f.api('PUT', '/config', { compatibility: 'BACKWARD' })
    }
    expectRefused(await register(s, ADD_REQUIRED.replace('Evt', 'Other')), s)
  })

  it('ignores soft-deleted versions', async () => {
    const s = await subjectAt(undefined, BASE)
    expect((await f.api('DELETE', `/subjects/${s}/versions/1`)).body).toBe(1)
    expect((await register(s, '"string"')).status).toBe(200)
    expect((await f.api('GET', `/subjects/${s}/versions`)).body).toEqual([2])
  })
})
