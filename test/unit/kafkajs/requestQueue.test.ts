import { describe, expect, it } from 'vitest'
import { RequestQueue } from '../../../src/kafkajs/requestQueue.js'

const tick = () => new Promise((resolve) => setImmediate(resolve))

describe('RequestQueue', () => {
  it('no cap unless a positive integer', () => {
    for (const cap of [undefined, null, 0, -1, 1.5, Number.NaN]) expect(new RequestQueue(cap, () => {}).capped).toBe(false)
    expect(new RequestQueue(2, () => {}).capped).toBe(true)
  })

  it('an operation waits for a slot at its first statement, and the queue length is reported on every change', async () => {
    const sizes: number[] = []
    const q = new RequestQueue(1, (n) => sizes.push(n))
    const a = q.operation()
    const b = q.operation()
    const aGo = await a.before()
    let bIn = false
    const bGo = b.before().then((done) => {
      bIn = true
      return done
    })
    await tick()
    expect(bIn).toBe(false)
    expect(sizes).toEqual([1])
    aGo()
    a.end()
    const bDone = await bGo
    expect(sizes).toEqual([1, 0])
    expect(b.takePendingDuration()).toBeGreaterThanOrEqual(0)
    bDone()
    b.end()
  })

  it('a statement an operation started keeps its slot after the operation ended, until it finishes', async () => {
    const q = new RequestQueue(1, () => {})
    const a = q.operation()
    const first = await a.before()
    // a coalescing writer sends a second statement in a's context; a's own promise settles meanwhile
    const second = await a.before()
    first()
    a.end()
    const b = q.operation()
    let bIn = false
    void b.before().then(() => (bIn = true))
    await tick()
    expect(bIn).toBe(false)
    second()
    await tick()
    expect(bIn).toBe(true)
  })

  it('a statement issued in an ended operation context takes a slot of its own', async () => {
    const q = new RequestQueue(1, () => {})
    const a = q.operation()
    ;(await a.before())()
    a.end()
    const late = await a.before()
    const b = q.operation()
    let bIn = false
    void b.before().then(() => (bIn = true))
    await tick()
    expect(bIn).toBe(false)
    late()
    await tick()
    expect(bIn).toBe(true)
  })
})
