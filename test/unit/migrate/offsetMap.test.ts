import { describe, expect, it } from 'vitest'
import { chain, EMPTY_CHECKSUM } from '../../../src/migrate/checksum.js'
import { record, translate, type Run } from '../../../src/migrate/offsetMap.js'

describe('offset runs', () => {
  it('a dense copy is one run; gaps on either side start a new one', () => {
    const runs: Run[] = []
    for (let i = 5; i < 10; i++) record(runs, i, i - 5)
    expect(runs).toEqual([[5, 0, 5]])
    record(runs, 12, 5) // source gap (compaction)
    record(runs, 13, 6)
    record(runs, 14, 9) // destination gap
    expect(runs).toEqual([
      [5, 0, 5],
      [12, 5, 2],
      [14, 9, 1],
    ])
  })

  it('translates a committed offset to the first copied message at or after it', () => {
    const runs: Run[] = [
      [5, 0, 5],
      [12, 5, 2],
    ]
    expect(translate(runs, 0, 7)).toBe(0) // behind retention: the first copied message
    expect(translate(runs, 5, 7)).toBe(0)
    expect(translate(runs, 7, 7)).toBe(2)
    expect(translate(runs, 10, 7)).toBe(5) // in the source gap: the next message that exists
    expect(translate(runs, 13, 7)).toBe(6)
    expect(translate(runs, 14, 7)).toBe(7) // read everything: the destination end
    expect(translate([], 3, 0)).toBe(0)
  })
})

describe('partition checksum', () => {
  const m = { key: Buffer.from('k'), value: Buffer.from('v'), headers: { b: Buffer.from('2'), a: '1' }, timestamp: '1' }
  it('ignores header order and batch boundaries, sees every field', () => {
    const one = chain(chain(EMPTY_CHECKSUM, m), m)
    expect(chain(chain(EMPTY_CHECKSUM, { ...m, headers: { a: Buffer.from('1'), b: '2' } }), m)).toBe(one)
    for (const other of [
      { ...m, key: null },
      { ...m, key: Buffer.alloc(0) },
      { ...m, value: null },
      { ...m, timestamp: '2' },
      { ...m, headers: { a: '1' } },
    ]) {
      expect(chain(chain(EMPTY_CHECKSUM, other), m)).not.toBe(one)
    }
  })
})
