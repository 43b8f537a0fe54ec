// The torture checker on hand-made histories: a clean history passes, and each kind of violation is found (and
// only that kind), so a clean torture run means something.
import { describe, expect, it } from 'vitest'
import { check, eosOutputValue, outstanding, VIOLATION_KINDS, type CheckConfig, type ViolationKind } from '../../torture/checker.js'
import type { HistoryEvent } from '../../torture/history.js'

type E = HistoryEvent
const config: CheckConfig = {
  sessionTimeoutMs: 1000,
  eos: [{ input: 'in', output: 'out' }],
  deadLetter: [{ input: 'dl', topic: 'dlq' }],
  denseOffsets: true,
  fencedHandlers: true,
  lossyTopics: ['capped'],
}

/** Builders: times are explicit so each scenario reads as a timeline. */
const ack = (t: number, w: string, value: string, topic = 'a', extra: Partial<E> = {}): E =>
  ({ t, w, k: 'ack', via: 'send', topic, value, ...extra }) as E
const sub = (t: number, w: string, g: string, topics: string[]): E => ({ t, w, k: 'sub', g, topics })
const he = (t: number, w: string, h: number, partition = 0, g = 'g', topic = 'a'): E => ({ t, w, k: 'he', g, topic, partition, h })
const hl = (t: number, w: string, h: number): E => ({ t, w, k: 'hl', h })
const d = (t: number, w: string, offset: number, value: string, partition = 0, g = 'g', topic = 'a'): E => ({
  t,
  w,
  k: 'd',
  g,
  topic,
  partition,
  offset: String(offset),
  value,
})
const x = (t: number, w: string, offset: number, partition = 0, g = 'g', topic = 'a'): E => ({
  t,
  w,
  k: 'x',
  g,
  topic,
  partition,
  offset: String(offset),
})
const c = (t: number, w: string, offset: number, partition = 0, g = 'g', topic = 'a'): E => ({
  t,
  w,
  k: 'c',
  g,
  topic,
  partition,
  offset: String(offset),
  src: 'event',
})

/** A member handling offsets [from, to] of partition 0, one handler per message, starting at t. */
function handle(w: string, t: number, from: number, to: number, h0: number, values = (o: number) => `v${o}`): E[] {
  const out: E[] = []
  for (let o = from; o <= to; o++) {
    const at = t + (o - from) * 10
    out.push(he(at, w, h0 + o), d(at + 1, w, o, values(o)), x(at + 2, w, o), hl(at + 3, w, h0 + o))
  }
  return out
}

const clean = (): E[] => [
  sub(0, 'c1', 'g', ['a']),
  ...[0, 1, 2, 3].map((o) => ack(1 + o, 'p1', `v${o}`, 'a', { partition: 0, offset: String(o) })),
  ...handle('c1', 10, 0, 3, 0),
  c(60, 'c1', 4),
]

const kinds = (events: E[]) => [...new Set(check(events, config).violations.map((v) => v.kind))].sort()
const only = (kind: ViolationKind) => [kind]

describe('torture checker', () => {
  it('passes a clean history and counts what it saw', () => {
    const { violations, counts } = check(clean(), config)
    expect(violations).toEqual([])
    expect(counts).toMatchObject({ acked: 4, deliveries: 4, duplicates: 0, commits: 1 })
  })

  it('counts redeliveries as duplicates, not violations', () => {
    const events = [...clean(), ...handle('c2', 100, 2, 3, 100)]
    const { violations, counts } = check(events, config)
    expect(violations).toEqual([])
    expect(counts.duplicates).toBe(2)
  })

  it('lost: an acknowledged message no member of a subscribed group received', () => {
    const events = clean().filter((e) => !(e.k === 'd' && e.offset === '2'))
    expect(kinds(events)).toContain('lost')
    // lossy (capped) topics are exempt: retention may delete what nobody consumed
    expect(kinds([sub(0, 'c1', 'g', ['capped']), ack(1, 'p1', 'z', 'capped')])).toEqual([])
  })

  it('order: a first delivery of a lower offset after a higher one (same priority)', () => {
    const events: E[] = [
      sub(0, 'c1', 'g', ['a']),
      ack(1, 'p', 'v0'),
      ack(2, 'p', 'v1'),
      he(10, 'c1', 1),
      d(11, 'c1', 1, 'v1'),
      x(12, 'c1', 1),
      hl(13, 'c1', 1),
      he(20, 'c1', 2),
      d(21, 'c1', 0, 'v0'),
      x(22, 'c1', 0),
      hl(23, 'c1', 2),
    ]
    expect(kinds(events)).toEqual(only('order'))
    // different priorities are different streams: an urgent message may overtake
    const prioritized = events.map((e) =>
      e.k === 'd' && e.offset === '1' ? { ...e, value: 'v1@p0' } : e.k === 'ack' && e.value === 'v1' ? { ...e, value: 'v1@p0' } : e,
    )
    expect(kinds(prioritized)).toEqual([])
  })

  it('concurrent: a second member enters a handler while the first (not stalled) is inside', () => {
    const events: E[] = [...clean(), he(20, 'c2', 99), d(21, 'c2', 1, 'v1'), hl(25, 'c2', 99)]
    expect(kinds(events)).toEqual(only('concurrent'))
  })

  it('concurrent: a handler past the session timeout may be overlapped, but its owner may not start another', () => {
    const takeover: E[] = [
      sub(0, 'c1', 'g', ['a']),
      ack(1, 'p', 'v0'),
      ack(2, 'p', 'v1'),
      he(10, 'zombie', 1),
      d(11, 'zombie', 0, 'v0'), // stalled for 5 s (session timeout 1 s)
      he(2000, 'c2', 1),
      d(2001, 'c2', 0, 'v0'),
      x(2002, 'c2', 0),
      d(2003, 'c2', 1, 'v1'),
      x(2004, 'c2', 1),
      hl(2005, 'c2', 1),
      x(5000, 'zombie', 0),
      hl(5001, 'zombie', 1),
    ]
    expect(kinds(takeover)).toEqual([])
    const resumed: E[] = [...takeover, he(6000, 'c2', 2), he(6001, 'zombie', 2), hl(6100, 'zombie', 2), hl(6200, 'c2', 2)]
    expect(kinds(resumed)).toEqual(only('concurrent'))
  })

  it('concurrent: a SIGKILLed member is out of its handler from the kill on', () => {
    const events: E[] = [
      ...clean(),
      he(100, 'c1', 50),
      { t: 110, w: 'orch', k: 'fault', f: 'kill', target: 'c1' },
      he(120, 'c2', 1),
      hl(130, 'c2', 1),
    ]
    expect(kinds(events)).toEqual([])
  })

  it('zombie: after a stall past the session, a member handles a partition taken over meanwhile, without joining again', () => {
    const stall: E[] = [
      ...clean(),
      { t: 100, w: 'orch', k: 'fault', f: 'stop', target: 'c1' },
      he(1200, 'c2', 1),
      hl(1210, 'c2', 1),
      { t: 2000, w: 'orch', k: 'fault', f: 'cont', target: 'c1' },
    ]
    expect(kinds(stall)).toEqual([])
    const zombie = [...stall, he(2100, 'c1', 70), hl(2110, 'c1', 70)]
    expect(kinds(zombie)).toEqual(only('zombie'))
    // joined again first: the partition may be its own again
    expect(kinds([...stall, { t: 2050, w: 'c1', k: 'join', g: 'g' } as E, he(2100, 'c1', 70), hl(2110, 'c1', 70)])).toEqual([])
    // a stall shorter than the session is no takeover
    expect(kinds(zombie.map((e) => (e.k === 'fault' && e.f === 'cont' ? { ...e, t: 900 } : e)))).toEqual([])
    // Kafka's consumers finish the batch they had fetched: the property is pgQueue's
    expect(check(zombie, { ...config, fencedHandlers: false }).violations).toEqual([])
  })

  it('commit-past-unprocessed: an offset committed past a message not processed yet', () => {
    // the priority bug: the urgent offset 3 first, committed as 4, while 0..2 wait
    const events: E[] = [
      sub(0, 'c1', 'g', ['a']),
      ...[0, 1, 2].map((o) => ack(o + 1, 'p', `v${o}`)),
      ack(4, 'p', 'v3@p0'),
      he(10, 'c1', 1),
      d(11, 'c1', 3, 'v3@p0'),
      x(12, 'c1', 3),
      c(13, 'c1', 4),
      hl(14, 'c1', 1),
      ...handle('c1', 20, 0, 2, 10),
    ]
    expect(kinds(events)).toEqual(only('commit-past-unprocessed'))
    // the same commit after 0..2 were processed is fine
    const later = events.map((e) => (e.k === 'c' ? { ...e, t: 100 } : e))
    expect(kinds(later)).toEqual([])
  })

  it('eos-duplicate and eos-missing: each input offset has exactly one output', () => {
    const input = (t: number, o: number): E[] => [ack(t, 'p', `i${o}`, 'in'), d(t + 1, 't1', o, `i${o}`, 0, 'eos', 'in')]
    const output = (t: number, o: number, at: number): E => ({
      t,
      w: 'audit',
      k: 'a',
      topic: 'out',
      partition: 0,
      offset: String(at),
      value: eosOutputValue('in', 0, String(o)),
    })
    const base: E[] = [sub(0, 't1', 'eos', ['in']), ...input(1, 0), ...input(3, 1), output(50, 0, 0), output(51, 1, 1)]
    expect(kinds(base)).toEqual([])
    expect(kinds([...base, output(52, 1, 2)])).toEqual(only('eos-duplicate'))
    expect(kinds(base.filter((e) => !(e.k === 'a' && e.offset === '1')))).toEqual(only('eos-missing'))
  })

  it('dead-letter: each poison offset is on the dead-letter topic once, and nothing handled or healthy is', () => {
    const entry = (t: number, at: number, origin: number, value: string): E => ({
      t,
      w: 'audit',
      k: 'a',
      topic: 'dlq',
      partition: 0,
      offset: String(at),
      value,
      origin: `dl/0@${origin}`,
    })
    // offset 1 is poison: delivered (each attempt fails), moved with its offset committed; 0 and 2 are handled
    const base: E[] = [
      sub(0, 'd1', 'gdl', ['dl']),
      ack(1, 'p', 'v0', 'dl'),
      ack(2, 'p', 'v1!poison', 'dl'),
      ack(3, 'p', 'v2', 'dl'),
      d(10, 'd1', 0, 'v0', 0, 'gdl', 'dl'),
      x(11, 'd1', 0, 0, 'gdl', 'dl'),
      d(12, 'd1', 1, 'v1!poison', 0, 'gdl', 'dl'),
      c(20, 'd1', 2, 0, 'gdl', 'dl'),
      d(21, 'd1', 2, 'v2', 0, 'gdl', 'dl'),
      x(22, 'd1', 2, 0, 'gdl', 'dl'),
      c(23, 'd1', 3, 0, 'gdl', 'dl'),
      entry(50, 0, 1, 'v1!poison'),
    ]
    const result = check(base, config)
    expect(result.violations).toEqual([])
    expect(result.counts).toMatchObject({ poison: 1, deadLettered: 1, duplicates: 0 })
    expect(kinds([...base, entry(51, 1, 1, 'v1!poison')])).toEqual(only('dead-letter-duplicate'))
    // not moved: missing, and the commit past it passed an unprocessed message
    expect(kinds(base.filter((e) => e.k !== 'a'))).toEqual(['commit-past-unprocessed', 'dead-letter-missing'])
    expect(kinds([...base, entry(51, 1, 0, 'v0')])).toEqual(only('dead-lettered-healthy'))
    expect(kinds([...base, x(13, 'd1', 1, 0, 'gdl', 'dl')])).toEqual(only('dead-lettered-healthy'))
    // the drain waits for a poison message until the group's offset passes it
    const beforeMove = base.filter((e) => !(e.k === 'a' || (e.k === 'c' && e.t >= 20)))
    expect(outstanding(beforeMove, config)).toBe(1)
    expect(outstanding(base, config)).toBe(0)
  })

  it('duplicate-write: an idempotent send stored twice; a plain send retried by the app is only counted', () => {
    const twice = (via: 'idempotent' | 'send'): E[] => [
      sub(0, 'c1', 'g', ['a']),
      ack(1, 'p', 'v0', 'a', { via }),
      ...handle('c1', 10, 0, 1, 0, () => 'v0'),
    ]
    expect(kinds(twice('idempotent'))).toEqual(only('duplicate-write'))
    const plain = check(twice('send'), config)
    expect(plain.violations).toEqual([])
    expect(plain.counts.writeDuplicates).toBe(1)
  })

  it('aborted-visible: a message of an aborted transaction, or of one that never reached COMMIT, was seen', () => {
    const seen: E = { t: 20, w: 'audit', k: 'a', topic: 'a', partition: 0, offset: '0', value: 'x0' }
    expect(kinds([{ t: 1, w: 'p', k: 'abort', via: 'txn', values: ['x0'], reason: 'aborted' }, seen])).toEqual(only('aborted-visible'))
    expect(kinds([{ t: 1, w: 'p', k: 'txb', id: 't1', via: 'outbox', values: ['x0'] }, seen])).toEqual(only('aborted-visible'))
    // a group that skipped the aborted message and committed past it did right: only the visibility is reported
    const skipped: E[] = [{ t: 1, w: 'p', k: 'abort', via: 'txn', values: ['x0'], reason: 'aborted' }, seen, c(30, 'c1', 1)]
    expect(kinds(skipped)).toEqual(only('aborted-visible'))
    // COMMIT was announced: the writer may have died after it went through
    expect(kinds([{ t: 1, w: 'p', k: 'txb', id: 't1', via: 'txn', values: ['x0'] }, { t: 2, w: 'p', k: 'txc', id: 't1' }, seen])).toEqual([])
  })

  it('gap: an offset hole inside a partition', () => {
    const events = clean()
      .filter((e) => !((e.k === 'd' || e.k === 'x') && e.offset === '2'))
      .filter((e) => !(e.k === 'ack' && e.value === 'v2'))
    expect(kinds(events)).toEqual(only('gap'))
    expect(kinds(events.filter((e) => e.k !== 'c'))).toEqual(only('gap'))
    expect(check(events, { ...config, denseOffsets: false }).violations.map((v) => v.kind)).not.toContain('gap')
  })

  it('ack-mismatch: the acknowledged offset holds another message', () => {
    const events = clean().map((e) => (e.k === 'ack' && e.value === 'v1' ? { ...e, offset: '3' } : e))
    expect(kinds(events)).toEqual(only('ack-mismatch'))
  })

  it('ack-mismatch on a capped topic: only an acknowledged offset seen holding another message', () => {
    // an application retry stored z twice; the cap deleted the acknowledged copy at 5 before anyone read it
    const retried: E[] = [
      sub(0, 'c1', 'g', ['capped']),
      ack(1, 'p1', 'z', 'capped', { partition: 0, offset: '5' }),
      d(2, 'c1', 2, 'z', 0, 'g', 'capped'),
      d(3, 'c1', 3, 'z', 0, 'g', 'capped'),
    ]
    expect(kinds(retried)).toEqual([])
    expect(kinds([...retried, d(4, 'c1', 5, 'y', 0, 'g', 'capped')])).toEqual(only('ack-mismatch'))
    // elsewhere an acknowledged offset never seen is still one
    const plain = retried.map((e) => ('topic' in e && e.topic === 'capped' ? { ...e, topic: 'a' } : e))
    expect(kinds(plain)).toContain('ack-mismatch')
  })

  it('deadlock, serialization and stuck: from client errors, PostgreSQL counters, watchdogs and the drain', () => {
    const err = (op: string, message: string): E => ({ t: 1, w: 'p', k: 'err', op, name: 'KafkaJSError', message })
    expect(kinds([err('txn.commit', 'commit: deadlock detected (SQLSTATE 40P01)')])).toEqual(only('deadlock'))
    expect(kinds([{ t: 1, w: 'orch', k: 'stat', name: 'pg.deadlocks', n: 2 }])).toEqual(only('deadlock'))
    expect(kinds([err('outbox-ser.commit', 'could not serialize access due to concurrent update')])).toEqual(only('serialization'))
    expect(kinds([err('send', 'could not serialize access due to concurrent update')])).toEqual([]) // a retried send rides it out
    expect(kinds([{ t: 1, w: 'p', k: 'stuck', op: 'send', ms: 31_000 }])).toEqual(only('stuck'))
    expect(kinds([{ t: 1, w: 'orch', k: 'stat', name: 'drain.incomplete', n: 3 }])).toEqual(only('stuck'))
  })

  it('knows exactly the seventeen kinds tested above (a new kind needs its test here)', () => {
    expect(VIOLATION_KINDS.length).toBe(17)
  })

  it('outstanding: what the drain still waits for', () => {
    expect(outstanding(clean(), config)).toBe(0)
    expect(outstanding([...clean(), ack(70, 'p1', 'v9')], config)).toBe(1)
    const input: E[] = [sub(0, 't1', 'eos', ['in']), ack(1, 'p', 'i0', 'in'), d(2, 't1', 0, 'i0', 0, 'eos', 'in')]
    expect(outstanding(input, config)).toBe(1)
    expect(outstanding([...input, { t: 3, w: 't1', k: 'ack', via: 'eos', topic: 'out', value: eosOutputValue('in', 0, '0') }], config)).toBe(0)
    // the transformer died between COMMIT and recording its ack: the group's committed offset says it went through
    expect(outstanding([...input, { t: 4, w: 'orch', k: 'c', g: 'eos', topic: 'in', partition: 0, offset: '1', src: 'poll' }], config)).toBe(0)
  })
})
