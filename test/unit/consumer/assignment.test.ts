import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { assignPartitions } from '../../../src/consumer/assignment.js'

describe('assignPartitions', () => {
  it('balances partitions round robin over members sorted by id', () => {
    const result = assignPartitions(
      [
        { memberId: 'b', topics: ['t'] },
        { memberId: 'a', topics: ['t'] },
      ],
      new Map([['t', 4]]),
    )
    expect(result.get('a')).toEqual({ t: [0, 2] })
    expect(result.get('b')).toEqual({ t: [1, 3] })
  })

  it('gives a topic only to members subscribed to it', () => {
    const result = assignPartitions(
      [
        { memberId: 'a', topics: ['x'] },
        { memberId: 'b', topics: ['x', 'y'] },
      ],
      new Map([
        ['x', 2],
        ['y', 3],
      ]),
    )
    expect(result.get('a')!.y).toBeUndefined()
    expect(result.get('b')!.y).toEqual([0, 1, 2])
  })

  it('property: every partition has exactly one owner, members differ by at most one, all members agree', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 40 }),
        (ids, partitions) => {
          const members = ids.map((memberId) => ({ memberId, topics: ['t'] }))
          const a = assignPartitions(members, new Map([['t', partitions]]))
          const b = assignPartitions([...members].reverse(), new Map([['t', partitions]]))
          expect(a).toEqual(b)
          const owned = [...a.values()].flatMap((m) => m.t ?? [])
          expect(owned.sort((x, y) => x - y)).toEqual(Array.from({ length: partitions }, (_, i) => i))
          const counts = [...a.values()].map((m) => (m.t ?? []).length)
          expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1)
        },
      ),
    )
  })
})
