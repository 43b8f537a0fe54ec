// The compacted-topic checker (test/torture/compacted.ts) on hand-made histories: each guarantee it checks is
// reported when broken, and nothing is reported for a correctly compacted log.
import { describe, expect, it } from 'vitest'
import { checkCompacted, type ReadRecord } from '../../torture/compacted.js'
import type { CompactedEvent } from '../../torture/workers/compacted.js'

const send = (id: string, key: string, value: string | null, offset?: string, partition = 0): CompactedEvent[] => [
  { k: 'attempt', id, key, value },
  ...(offset === undefined ? [] : [{ k: 'ack' as const, id, partition, offset }]),
]
const rec = (offset: string, key: string, value: string | null, partition = 0): ReadRecord => ({ partition, offset, key, value })
const kinds = (events: CompactedEvent[], read: ReadRecord[], last = '9') => checkCompacted(events, read, new Map([[0, last]])).map((v) => v.kind)

describe('checkCompacted', () => {
  const history = [...send('a1', 'a', 'v1', '0'), ...send('a2', 'a', 'v2', '3'), ...send('b1', 'b', 'x', '4'), ...send('b2', 'b', null, '5')]

  it('accepts the latest value per key, tombstoned keys gone', () => {
    expect(kinds(history, [rec('3', 'a', 'v2'), rec('9', 'z', 'anchor')])).toEqual([])
  })

  it('reports a lost latest value, an older value surviving, and a key back after its tombstone', () => {
    expect(kinds(history, [rec('3', 'a', 'v2')].slice(1))).toEqual(['lost-latest'])
    expect(kinds(history, [rec('0', 'a', 'v1'), rec('3', 'a', 'v2')])).toEqual(['older-survives'])
    expect(kinds(history, [rec('3', 'a', 'v2'), rec('4', 'b', 'x')])).toEqual(['resurrected'])
  })

  it('reports a kept tombstone that is not the anchor, moved offsets and offsets out of order', () => {
    expect(kinds(history, [rec('3', 'a', 'v2'), rec('5', 'b', null)])).toEqual(['tombstone-kept'])
    expect(kinds(history, [rec('3', 'a', 'v2'), rec('5', 'b', null)], '5')).toEqual([])
    expect(kinds(history, [rec('6', 'a', 'v2')])).toContain('offset-moved')
    expect(kinds(history, [rec('3', 'a', 'v2'), rec('2', 'c', 'q')])).toContain('offset-order')
  })

  it('an unacknowledged send may be what survives (killed after its commit)', () => {
    const events = [...history, ...send('a3', 'a', 'v3')]
    expect(kinds(events, [rec('7', 'a', 'v3')])).toEqual([])
    expect(kinds(history, [rec('7', 'a', 'v3')])).toEqual(['lost-latest'])
  })
})
