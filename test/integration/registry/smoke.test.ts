import { describe, expect, it } from 'vitest'
import { record, useRegistry } from './helpers.js'

const f = useRegistry('reg_smoke')

describe('smoke', () => {
  it('registers', async () => {
    const r = await f.api('POST', '/subjects/s1/versions', { schema: record('A') })
    expect(r.status).toBe(200)
    console.log(r)
    console.log(await f.api('GET', '/subjects/s1/versions/latest'))
  })
})
