import { describe, expect, it } from 'vitest'
import { offsetOfSeq, PartitionState } from '../../../src/consumer/partitionState.js'
import { createBatch, toKafkaMessage } from '../../../src/consumer/batch.js'
import type { FetchedRow } from '../../../src/store/fetch.js'

const row = (seq: number, extra: Partial<FetchedRow> = {}): FetchedRow => ({
  seq: String(seq),
  priority: 5,
  routingKey: 'k',
  messageKey: null,
  flags: 0,
  payload: Buffer.from(`v${seq}`),
  compression: 0,
  headers: null,
  timestampMs: '1700000000000',
  enqueuedAtMs: '1700000000000',
  payloadBytes: 2,
  ...extra,
})

describe('offsets and sequences', () => {
  it('maps Kafka offsets to seqs: the first message (seq 1) is offset 0', () => {
    expect(offsetOfSeq(1n)).toBe('0')
  })
})

describe('PartitionState', () => {
  it('starts every priority at the committed seq, or at stored per-priority positions when ahead', () => {
    const s = new PartitionState('t', '1', 0, 10n, ['10', '10', '12', '10', '10', '10', '10', '10', '10', '10'])
    expect(s.resolved[2]).toBe(12n)
    expect(s.resolved[5]).toBe(10n)
  })

  it('rewinds fetch positions to what was resolved, and seek resets both', () => {
    const s = new PartitionState('t', '1', 0, 0n, null)
    s.delivered(5n, 5)
    s.resolve(3n, 5)
    expect(s.dirty).toBe(true)
    s.rewind()
    expect(s.positions[5]).toBe(3n)
    s.seekTo(1n)
    expect(s.positions.every((p) => p === 1n)).toBe(true)
    expect(s.dirty).toBe(false)
  })

  // a batch in band order: urgent seqs 48 and 50..54 (offsets 47, 49..53) first, then the normal seq 49 (offset 48)
  const bandOrdered = [48, 50, 51, 52, 53, 54].map((seq) => ({ seq: BigInt(seq), priority: 0 })).concat([{ seq: 49n, priority: 5 }])
  const committedAt47 = () => new PartitionState('t', '1', 0, 47n, null)

  it('an explicit commit of lastOffset() + 1 covers the whole batch, in band order as well as in offset order', () => {
    const s = committedAt47()
    s.startBatch(bandOrdered)
    for (const d of bandOrdered) s.handOut(d.seq, d.priority)
    // lastOffset() is the last message delivered, offset 48: committing 49 must not leave offsets 49..53 behind
    const positions = s.explicitPositions(49n)
    expect(positions[0]).toBe(54n)
    expect(positions[5]).toBe(49n)
  })

  it('after a failed attempt is rewound, a commit in the retried batch does not cover what the failed one handed out', () => {
    const s = committedAt47()
    // the failed attempt: the whole batch handed out (eachBatch), nothing resolved, rewound for redelivery
    s.startBatch(bandOrdered)
    for (const d of bandOrdered) s.handOut(d.seq, d.priority)
    s.rewind()
    // the retry: the urgent first message is moved to the dead-letter topic, committing its offset + 1
    s.startBatch(bandOrdered)
    s.handOut(48n, 0)
    const positions = s.explicitPositions(48n)
    expect(positions[0]).toBe(48n)
    // before: the normal message of the failed attempt counted as handed out, and the commit passed it (lost)
    expect(positions[5]).toBe(47n)
  })

  it("a commit of a message's offset + 1 covers what was delivered before it, and nothing delivered after it", () => {
    const s = committedAt47()
    s.startBatch(bandOrdered)
    for (const d of bandOrdered.slice(0, 3)) s.handOut(d.seq, d.priority)
    // the third message delivered is offset 50 (seq 51): the normal offset 48 comes last and is not covered
    const positions = s.explicitPositions(51n)
    expect(positions[0]).toBe(51n)
    expect(positions[5]).toBe(47n)
    // a message of the batch not handed out yet falls back to the handed-out rule (decision 005)
    expect(s.explicitPositions(49n)[5]).toBe(47n)
  })

  it('a handled commit is translated only by a state that handed the message out; a fresh one cannot', () => {
    const s = committedAt47()
    s.startBatch(bandOrdered)
    for (const d of bandOrdered.slice(0, 3)) s.handOut(d.seq, d.priority)
    expect(s.handledPositions(51n)).toEqual(s.explicitPositions(51n))
    // started afresh from the committed offset (the lease lapsed and was taken again): nothing handed out, so the
    // skip-ahead rule would move the normal priority past seq 49 too
    const fresh = committedAt47()
    expect(fresh.explicitPositions(51n)[5]).toBe(51n)
    expect(fresh.handledPositions(51n)).toBeUndefined()
    // the committed point itself is known to it
    expect(fresh.handledPositions(47n)).toEqual(fresh.explicitPositions(47n))
  })

  it('an explicit commit of a message the earlier state handed out is translated by that state, not as a skip ahead', () => {
    const earlier = committedAt47()
    earlier.startBatch(bandOrdered)
    for (const d of bandOrdered.slice(0, 3)) earlier.handOut(d.seq, d.priority)
    // the lease lapsed while the handler ran and was taken again: a fresh state, which knows only the committed seq
    const fresh = committedAt47()
    fresh.succeed(earlier)
    expect(fresh.explicitPositions(51n)).toEqual(earlier.explicitPositions(51n))
    expect(fresh.explicitPositions(51n)[5]).toBe(47n)
    // still a skip ahead past everything either state handed out, as on Kafka
    expect(fresh.explicitPositions(60n).every((p) => p === 60n)).toBe(true)
    // a second lapse before the partition delivered again keeps the state that did hand the message out
    const again = committedAt47()
    again.succeed(fresh)
    expect(again.explicitPositions(51n)[5]).toBe(47n)
    // transactions stay fenced: only the state that handed the message out translates them
    expect(fresh.handledPositions(51n)).toBeUndefined()
  })
})

describe('batch decoding', () => {
  it('decodes null keys and values from flags, binary keys from message_key, and headers', () => {
    const nulls = toKafkaMessage(row(1, { flags: 3, payload: Buffer.alloc(0) }), 't', 0).message
    expect(nulls.key).toBeNull()
    expect(nulls.value).toBeNull()
    const binary = toKafkaMessage(row(2, { messageKey: Buffer.from([0xff, 0x00]) }), 't', 0).message
    expect(binary.key).toEqual(Buffer.from([0xff, 0x00]))
    const h = toKafkaMessage(row(3, { headers: [{ key: 'a', v: Buffer.from('x').toString('base64') }] }), 't', 0).message
    expect(h.headers!.a).toEqual(Buffer.from('x'))
    expect(h.offset).toBe('2')
  })

  it('delivers an undecodable row raw with a header saying why, instead of throwing', () => {
    const m = toKafkaMessage(row(4, { compression: 7 }), 'orders', 3).message
    expect(m.value).toEqual(Buffer.from('v4'))
    expect(m.headers!['x-pgqueue-decode-error']!.toString()).toMatch(/payload_compression 7 for topic "orders" partition 3 offset 3/)
  })

  it('computes KafkaJS batch offsets and lags', () => {
    const delivered = [row(3), row(4), row(5)].map((r) => toKafkaMessage(r, 't', 0))
    const batch = createBatch('t', 0, '10', delivered)
    expect([batch.firstOffset(), batch.lastOffset(), batch.offsetLag(), batch.offsetLagLow()]).toEqual(['2', '4', '5', '7'])
    const empty = createBatch('t', 0, '10', [])
    expect([empty.isEmpty(), empty.firstOffset(), empty.lastOffset()]).toEqual([true, null, '9'])
  })
})
