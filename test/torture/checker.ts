// The checker: reads a recorded history and reports every broken guarantee of docs/guarantees.md, by kind, with
// the events that show it. Pure: no database, no clock; unit-tested on hand-made histories
// (test/unit/torture/checker.test.ts).
import {
  isPoison,
  priorityOf,
  type Ack,
  type Aborted,
  type Audit,
  type Commit,
  type Delivery,
  type Fault,
  type HandlerEnter,
  type HistoryEvent,
  type Processed,
  type TxnBegin,
} from './history.js'
import { heartbeatIntervalFor } from './spec.js'

export const VIOLATION_KINDS = [
  'lost', // an acknowledged message never delivered to a group subscribed to its topic
  'order', // first deliveries of one partition (and priority) out of offset order
  'concurrent', // two handlers for one group's partition at once (not excused by a handler past the session timeout)
  'zombie', // a member stalled past its session handled a partition taken over meanwhile, before joining again
  'commit-past-unprocessed', // a committed offset passed a message the group had not processed yet
  'eos-duplicate', // a consume-transform-produce input with more than one output
  'eos-missing', // an acknowledged input with no output after the drain
  'dead-letter-missing', // a stored poison message that is not on the dead-letter topic after the drain
  'dead-letter-duplicate', // a message dead-lettered more than once
  'dead-lettered-healthy', // a message on the dead-letter topic whose handler did not fail (or not from the input)
  'duplicate-write', // an idempotent / transactional / outbox message stored at two offsets
  'aborted-visible', // a message of an aborted transaction or rolled-back outbox transaction was seen
  'gap', // an offset hole in a partition (pgQueue promises dense offsets)
  'ack-mismatch', // the acknowledged offset holds another message
  'deadlock', // a deadlock error reached a client, or PostgreSQL counted one
  'serialization', // an outbox transaction of the caller failed with a serialization error caused by the queue
  'stuck', // an operation pending beyond the bound, or the drain did not finish
] as const
export type ViolationKind = (typeof VIOLATION_KINDS)[number]

export interface Violation {
  kind: ViolationKind
  message: string
  /** the few events that show it */
  excerpt: HistoryEvent[]
}

export interface CheckConfig {
  /** a handler running longer than this may be overlapped: the partition moved on (docs/guarantees.md) */
  sessionTimeoutMs: number
  /** topics whose retention caps may delete unconsumed messages: no loss, gap or commit check there */
  lossyTopics?: string[]
  /** consume-transform-produce pairs: each input offset must have exactly one output */
  eos?: Array<{ input: string; output: string }>
  /** input topics with poison messages and their dead-letter topics: each poison offset is moved there once */
  deadLetter?: Array<{ input: string; topic: string }>
  /**
   * A member stopped past the session timeout handles nothing of a partition another member took over, until it
   * has joined again (pgQueue fences every fetch, #13; KafkaJS on Kafka finishes the batch it had fetched).
   */
  fencedHandlers?: boolean
  /** offsets are gap-free per partition (pgQueue; Kafka's transaction markers take offsets) */
  denseOffsets?: boolean
  /** topics whose events are not checked: deadLetter()'s retry topics (a hop is checked where it ends) */
  unchecked?: string[]
}

export interface Counts {
  acked: number
  ackedBy: Record<string, number>
  aborted: number
  ambiguous: number
  deliveries: number
  /** deliveries of a (group, partition, offset) already delivered to that group */
  duplicates: number
  /** plain sends the application retried after an ambiguous failure and that were stored twice (allowed) */
  writeDuplicates: number
  /** stored poison messages (their handler fails every time), and entries of the dead-letter topics */
  poison: number
  deadLettered: number
  /** members whose consumer crashed without a restart (KafkaJS's CRASH with restart false): they consume no more */
  crashedForGood: number
  commits: number
  seeks: number
  faults: Record<string, number>
  audited: number
}

export interface CheckResult {
  counts: Counts
  violations: Violation[]
}

/** The identity `eos|<topic>|<partition>|<offset>` of the input an output was made from. */
export const eosOutputValue = (topic: string, partition: number, offset: string) => `eos|${topic}|${partition}|${offset}`

const tpKey = (topic: string, partition: number) => `${topic}/${partition}`
const MAX_PER_KIND = 20

export function check(events: HistoryEvent[], config: CheckConfig): CheckResult {
  const unchecked = new Set(config.unchecked ?? [])
  const history = events.filter((e) => !('topic' in e) || !unchecked.has(e.topic)).sort((a, b) => a.t - b.t)
  const lossy = new Set(config.lossyTopics ?? [])
  const violations: Violation[] = []
  const perKind = new Map<ViolationKind, number>()
  const report = (kind: ViolationKind, message: string, excerpt: HistoryEvent[]) => {
    const n = (perKind.get(kind) ?? 0) + 1
    perKind.set(kind, n)
    if (n <= MAX_PER_KIND) violations.push({ kind, message, excerpt: excerpt.slice(0, 8) })
  }
  const of = <K extends HistoryEvent['k']>(k: K) => history.filter((e): e is Extract<HistoryEvent, { k: K }> => e.k === k)

  const acks = of('ack')
  const deliveries = of('d')
  const audits = of('a')

  const dlTopics = new Set((config.deadLetter ?? []).map((p) => p.topic))
  // a dead-letter entry repeats its original's value: it is no second copy of the message
  const { atOffset, placesOf } = storedPlaces(history, dlTopics)
  const deadLetters = audits.filter((a) => dlTopics.has(a.topic))
  const moved = new Set(deadLetters.map((a) => a.origin ?? ''))

  checkLoss(history, deliveries, lossy, report)
  checkOrder(deliveries, report)
  checkConcurrency(history, config.sessionTimeoutMs, report)
  if (config.fencedHandlers) checkZombies(history, config.sessionTimeoutMs, report)
  const invisible = mustStayInvisible(history)
  checkCommits(of('c'), of('x'), atOffset, lossy, invisible, moved, report)
  checkEos(config.eos ?? [], acks, placesOf, report)
  const poison = checkDeadLetters(config.deadLetter ?? [], deadLetters, of('x'), atOffset, invisible, report)
  const writeDuplicates = checkWrites(acks, placesOf, report)
  checkAborted(invisible, placesOf, report)
  if (config.denseOffsets) checkGaps(atOffset, lossy, report)
  checkAckOffsets(acks, placesOf, atOffset, lossy, report)
  checkErrors(history, report)

  for (const [kind, n] of perKind) {
    if (n > MAX_PER_KIND) violations.push({ kind, message: `… and ${n - MAX_PER_KIND} more of this kind`, excerpt: [] })
  }
  const distinct = new Set(deliveries.map((d) => `${d.g}|${tpKey(d.topic, d.partition)}@${d.offset}`))
  const faults: Record<string, number> = {}
  for (const f of of('fault')) if (f.f !== 'cont' && f.f !== 'respawn') faults[f.f] = (faults[f.f] ?? 0) + 1
  const ackedBy: Record<string, number> = {}
  for (const a of acks) ackedBy[a.via] = (ackedBy[a.via] ?? 0) + 1
  return {
    counts: {
      acked: acks.length,
      ackedBy,
      aborted: of('abort').reduce((n, a) => n + a.values.length, 0),
      ambiguous: of('amb').reduce((n, a) => n + a.values.length, 0),
      deliveries: deliveries.length,
      duplicates: deliveries.length - distinct.size,
      writeDuplicates,
      poison,
      deadLettered: deadLetters.length,
      crashedForGood: of('err').filter((e) => e.op === 'crash(restart=false)').length,
      commits: of('c').length,
      seeks: of('seek').length,
      faults,
      audited: audits.length,
    },
    violations: violations.sort((a, b) => VIOLATION_KINDS.indexOf(a.kind) - VIOLATION_KINDS.indexOf(b.kind)),
  }
}

type Stored = Map<string, Map<bigint, { value: string; ev: HistoryEvent }>>
type Places = Map<string, Map<string, HistoryEvent>>

/**
 * Where each value was seen stored (deliveries and the audit): tp -> offset -> value, and value -> "tp@offset" ->
 * event (not counting the dead-letter topics').
 */
function storedPlaces(history: HistoryEvent[], dlTopics: Set<string>): { atOffset: Stored; placesOf: Places } {
  const atOffset: Stored = new Map()
  const placesOf: Places = new Map()
  for (const e of history) {
    if (e.k !== 'd' && e.k !== 'a') continue
    const key = tpKey(e.topic, e.partition)
    let offsets = atOffset.get(key)
    if (!offsets) atOffset.set(key, (offsets = new Map()))
    if (!offsets.has(BigInt(e.offset))) offsets.set(BigInt(e.offset), { value: e.value, ev: e })
    if (dlTopics.has(e.topic)) continue
    let places = placesOf.get(e.value)
    if (!places) placesOf.set(e.value, (places = new Map()))
    if (!places.has(`${key}@${e.offset}`)) places.set(`${key}@${e.offset}`, e)
  }
  return { atOffset, placesOf }
}

type Report = (kind: ViolationKind, message: string, excerpt: HistoryEvent[]) => void

/** Acknowledged messages not (yet) delivered to a group that subscribes to their topic. */
function undelivered(history: HistoryEvent[], lossy: Set<string>): Array<{ ack: Ack; group: string }> {
  const groupsOf = new Map<string, Set<string>>()
  const delivered = new Set<string>()
  const acks: Ack[] = []
  for (const e of history) {
    if (e.k === 'ack') acks.push(e)
    else if (e.k === 'd') delivered.add(`${e.g}|${e.value}`)
    else if (e.k === 'sub') {
      for (const topic of e.topics) {
        let groups = groupsOf.get(topic)
        if (!groups) groupsOf.set(topic, (groups = new Set()))
        groups.add(e.g)
      }
    }
  }
  const missing: Array<{ ack: Ack; group: string }> = []
  for (const ack of acks) {
    if (lossy.has(ack.topic)) continue
    for (const group of groupsOf.get(ack.topic) ?? []) if (!delivered.has(`${group}|${ack.value}`)) missing.push({ ack, group })
  }
  return missing
}

/**
 * What the drain waits for: undelivered acknowledged messages, consume-transform-produce inputs whose output
 * transaction has not committed yet, and poison messages not moved to their dead-letter topic yet. An input or a
 * poison message is settled once its group's committed offset passed it (the output, or the move, commits with
 * that offset), even when its writer died before it could record its acknowledgement.
 */
export function outstanding(events: HistoryEvent[], config: CheckConfig): number {
  const committedOutputs = new Set(events.filter((e): e is Ack => e.k === 'ack' && e.via === 'eos').map((e) => e.value))
  const eosInputs = new Set((config.eos ?? []).map((p) => p.input))
  const dlInputs = new Set((config.deadLetter ?? []).map((p) => p.input))
  const committed = new Map<string, bigint>()
  for (const e of events) {
    if (e.k !== 'c' || !(eosInputs.has(e.topic) || dlInputs.has(e.topic))) continue
    const k = `${e.g}|${tpKey(e.topic, e.partition)}`
    if (BigInt(e.offset) > (committed.get(k) ?? -1n)) committed.set(k, BigInt(e.offset))
  }
  const waiting = new Set<string>()
  for (const e of events) {
    if (e.k !== 'd') continue
    const pending = eosInputs.has(e.topic)
      ? !committedOutputs.has(eosOutputValue(e.topic, e.partition, e.offset))
      : dlInputs.has(e.topic) && isPoison(e.value)
    if (pending && (committed.get(`${e.g}|${tpKey(e.topic, e.partition)}`) ?? -1n) <= BigInt(e.offset))
      waiting.add(`${e.g}|${tpKey(e.topic, e.partition)}@${e.offset}`)
  }
  return undelivered(events, new Set(config.lossyTopics ?? [])).length + waiting.size
}

/** Every acknowledged message reaches every group that subscribes to its topic. */
function checkLoss(history: HistoryEvent[], deliveries: Delivery[], lossy: Set<string>, report: Report) {
  for (const { ack: a, group: g } of undelivered(history, lossy)) {
    const around = deliveries.filter(
      (d) => d.g === g && d.topic === a.topic && (a.partition === undefined || d.partition === a.partition) && Math.abs(d.t - a.t) < 5000,
    )
    report('lost', `group ${g} never received ${a.value} (${a.topic}/${a.partition ?? '?'}@${a.offset ?? '?'}, acknowledged via ${a.via})`, [
      a,
      ...around.slice(-3),
    ])
  }
}

/** The first delivery of each message of a partition (and priority), within a group, comes in offset order. */
function checkOrder(deliveries: Delivery[], report: Report) {
  const seen = new Set<string>()
  const highest = new Map<string, Delivery>()
  for (const d of deliveries) {
    const id = `${d.g}|${tpKey(d.topic, d.partition)}@${d.offset}`
    if (seen.has(id)) continue // a redelivery replays older messages: not a reordering
    seen.add(id)
    const stream = `${d.g}|${tpKey(d.topic, d.partition)}|${priorityOf(d.value)}`
    const top = highest.get(stream)
    if (top && BigInt(d.offset) < BigInt(top.offset)) {
      report(
        'order',
        `group ${d.g} ${tpKey(d.topic, d.partition)} priority ${priorityOf(d.value)}: first delivery of offset ${d.offset} after offset ${top.offset}`,
        [top, d],
      )
    } else highest.set(stream, d)
  }
}

interface Interval {
  enter: HandlerEnter
  end: number
  endEvent?: HistoryEvent
}

/**
 * No two handlers of one group's partition overlap in time. A handler that ran longer than the session timeout
 * less one heartbeat interval (slow, or its process stopped) may have lost the partition by design: a batch is
 * handed out at most a heartbeat interval after the member's last heartbeat, and the session runs from that
 * heartbeat (as on Kafka). A handler that starts while it runs is excused; a handler that *starts* while another,
 * shorter one runs is not.
 */
function checkConcurrency(history: HistoryEvent[], sessionTimeoutMs: number, report: Report) {
  const excusedAfterMs = sessionTimeoutMs - heartbeatIntervalFor(sessionTimeoutMs)
  const open = new Map<string, HandlerEnter>()
  const intervals: Interval[] = []
  const lastSeen = new Map<string, number>()
  const close = (key: string, end: number, endEvent?: HistoryEvent) => {
    const enter = open.get(key)
    if (!enter) return
    open.delete(key)
    intervals.push({ enter, end, endEvent })
  }
  for (const e of history) {
    lastSeen.set(e.w, e.t)
    if (e.k === 'he') open.set(`${e.w}#${e.h}`, e)
    else if (e.k === 'hl') close(`${e.w}#${e.h}`, e.t, e)
    else if (e.k === 'exit' || (e.k === 'fault' && e.f === 'kill')) {
      // a dead process's handler ended when it died
      for (const key of [...open.keys()]) if (key.startsWith(`${e.target}#`)) close(key, e.t, e)
    }
  }
  const endOfHistory = history.length > 0 ? history[history.length - 1].t : 0
  for (const key of [...open.keys()]) close(key, endOfHistory)

  const byPartition = new Map<string, Interval[]>()
  for (const iv of intervals) {
    const k = `${iv.enter.g}|${tpKey(iv.enter.topic, iv.enter.partition)}`
    let list = byPartition.get(k)
    if (!list) byPartition.set(k, (list = []))
    list.push(iv)
  }
  for (const list of byPartition.values()) {
    list.sort((a, b) => a.enter.t - b.enter.t)
    const running: Interval[] = []
    for (const iv of list) {
      for (let i = running.length - 1; i >= 0; i--) if (running[i].end <= iv.enter.t) running.splice(i, 1)
      for (const other of running) {
        if (other.end - other.enter.t > excusedAfterMs) continue // it may have lost the partition: moving on is by design
        const same = other.enter.w === iv.enter.w
        report(
          'concurrent',
          `group ${iv.enter.g} ${tpKey(iv.enter.topic, iv.enter.partition)}: ${iv.enter.w} entered a handler at ${iv.enter.t} while ${same ? 'its own' : `${other.enter.w}'s`} handler (entered ${other.enter.t}) ran until ${other.end}`,
          [other.enter, iv.enter, ...(other.endEvent ? [other.endEvent] : [])],
        )
      }
      running.push(iv)
    }
  }
}

/**
 * After a stall past the session timeout (SIGSTOP .. SIGCONT), a member must not enter a handler for a partition
 * another member of its group entered meanwhile, until it has joined the group again.
 */
function checkZombies(history: HistoryEvent[], sessionTimeoutMs: number, report: Report) {
  const stops = new Map<string, Fault>()
  for (const e of history) {
    if (e.k !== 'fault') continue
    if (e.f === 'stop') stops.set(e.target, e)
    else if (e.f === 'cont' && stops.has(e.target)) {
      const stop = stops.get(e.target)!
      stops.delete(e.target)
      if (e.t - stop.t > sessionTimeoutMs) zombieAfter(history, stop, e, report)
    }
  }
}

function zombieAfter(history: HistoryEvent[], stop: Fault, cont: Fault, report: Report) {
  const member = stop.target
  const takenOver = new Map<string, HandlerEnter>()
  for (const e of history) {
    if (e.t < stop.t) continue
    if (e.k === 'he' && e.w !== member) {
      if (!takenOver.has(`${e.g}|${tpKey(e.topic, e.partition)}`)) takenOver.set(`${e.g}|${tpKey(e.topic, e.partition)}`, e)
    } else if (e.t > cont.t) {
      // a new member now: it joined again, or the process is gone
      if ((e.k === 'join' && e.w === member) || (e.k === 'exit' && e.target === member)) return
      if (e.k !== 'he' || e.w !== member) continue
      const successor = takenOver.get(`${e.g}|${tpKey(e.topic, e.partition)}`)
      if (successor) {
        report(
          'zombie',
          `${member}, stopped ${cont.t - stop.t} ms (past the session), handled ${tpKey(e.topic, e.partition)} of group ${e.g} at ${e.t} after ${successor.w} took it over at ${successor.t}, without joining again`,
          [stop, successor, cont, e],
        )
        return
      }
    }
  }
}

/**
 * A committed offset c at time t: every stored message of that partition below c was processed by the group by t
 * (an aborted one that was seen anyway is reported as aborted-visible, not here; one moved to a dead-letter topic
 * was committed by its move, in the same transaction).
 */
function checkCommits(
  commits: Commit[],
  processed: Processed[],
  atOffset: Stored,
  lossy: Set<string>,
  invisible: Map<string, HistoryEvent>,
  moved: Set<string>,
  report: Report,
) {
  const firstDone = new Map<string, Map<bigint, Processed>>()
  for (const x of processed) {
    const k = `${x.g}|${tpKey(x.topic, x.partition)}`
    let m = firstDone.get(k)
    if (!m) firstDone.set(k, (m = new Map()))
    if (!m.has(BigInt(x.offset))) m.set(BigInt(x.offset), x)
  }
  // per group partition: offsets in order, and the time by which every stored offset up to each one was processed
  const prefix = new Map<string, Array<{ offset: bigint; doneBy: number; missing: { offset: bigint; value: string; ev: HistoryEvent } }>>()
  const prefixOf = (g: string, topic: string, partition: number) => {
    const k = `${g}|${tpKey(topic, partition)}`
    let p = prefix.get(k)
    if (p) return p
    p = []
    const stored = [...(atOffset.get(tpKey(topic, partition)) ?? new Map()).entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))
    const done = firstDone.get(k) ?? new Map<bigint, Processed>()
    let doneBy = -Infinity
    let missing = { offset: -1n, value: '', ev: undefined as unknown as HistoryEvent }
    for (const [offset, { value, ev }] of stored) {
      if (invisible.has(value)) continue // an aborted message (Kafka gives it an offset) is nothing to process
      if (moved.has(`${tpKey(topic, partition)}@${offset}`)) continue
      const t = done.get(offset)?.t ?? Infinity
      if (t > doneBy) {
        doneBy = t
        missing = { offset, value, ev }
      }
      p.push({ offset, doneBy, missing })
    }
    prefix.set(k, p)
    return p
  }
  const reported = new Set<string>()
  for (const c of commits) {
    if (lossy.has(c.topic)) continue
    const p = prefixOf(c.g, c.topic, c.partition)
    const committed = BigInt(c.offset)
    // the last stored offset below the committed one
    let lo = 0
    let hi = p.length - 1
    let idx = -1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (p[mid].offset < committed) {
        idx = mid
        lo = mid + 1
      } else hi = mid - 1
    }
    if (idx < 0 || p[idx].doneBy <= c.t) continue
    const k = `${c.g}|${tpKey(c.topic, c.partition)}@${p[idx].missing.offset}`
    if (reported.has(k)) continue
    reported.add(k)
    const m = p[idx].missing
    report(
      'commit-past-unprocessed',
      `group ${c.g} ${tpKey(c.topic, c.partition)}: offset ${c.offset} committed (${c.src}, by ${c.w} at ${c.t}) while offset ${m.offset} (${m.value}) was ${p[idx].doneBy === Infinity ? 'never' : 'not yet'} processed`,
      [c, m.ev],
    )
  }
}

/** Stored input messages (acknowledged) of a consume-transform-produce pair that have no output. */
function missingOutputs(input: string, acks: Ack[], placesOf: Places): Array<{ ack: Ack; place: Delivery }> {
  const missing: Array<{ ack: Ack; place: Delivery }> = []
  for (const ack of acks) {
    if (ack.topic !== input) continue
    for (const place of (placesOf.get(ack.value) ?? new Map<string, HistoryEvent>()).values()) {
      const e = place as Delivery
      if (!placesOf.has(eosOutputValue(e.topic, e.partition, e.offset))) missing.push({ ack, place: e })
    }
  }
  return missing
}

/** Consume-transform-produce: every input offset has exactly one output message, and every acknowledged input one. */
function checkEos(pairs: Array<{ input: string; output: string }>, acks: Ack[], placesOf: Places, report: Report) {
  for (const { input } of pairs) {
    for (const [value, places] of placesOf) {
      if (value.startsWith(`eos|${input}|`) && places.size > 1) {
        report('eos-duplicate', `input ${value.slice(4)} produced ${places.size} outputs (${[...places.keys()].join(', ')})`, [...places.values()])
      }
    }
    for (const { ack, place } of missingOutputs(input, acks, placesOf)) {
      report('eos-missing', `input ${ack.value} (${tpKey(place.topic, place.partition)}@${place.offset}) has no output`, [ack, place])
    }
  }
}

/**
 * Poison messages (their handler fails every time) end on the dead-letter topic, each stored offset exactly once;
 * nothing else goes there, and nothing dead-lettered was also handled. Returns how many poison messages were stored.
 */
function checkDeadLetters(
  pairs: Array<{ input: string; topic: string }>,
  deadLetters: Audit[],
  processed: Processed[],
  atOffset: Stored,
  invisible: Map<string, HistoryEvent>,
  report: Report,
): number {
  let poison = 0
  const handled = new Map(processed.map((x) => [`${tpKey(x.topic, x.partition)}@${x.offset}`, x]))
  for (const { input, topic } of pairs) {
    const byOrigin = new Map<string, Audit[]>()
    for (const a of deadLetters) if (a.topic === topic) byOrigin.set(a.origin ?? '?', [...(byOrigin.get(a.origin ?? '?') ?? []), a])
    for (const [origin, entries] of byOrigin) {
      const [entry] = entries
      if (entries.length > 1) report('dead-letter-duplicate', `${origin} (${entry.value}) is on ${topic} ${entries.length} times`, entries)
      const at = origin.lastIndexOf('@')
      const stored = origin.startsWith(`${input}/`) ? atOffset.get(origin.slice(0, at))?.get(BigInt(origin.slice(at + 1))) : undefined
      const x = handled.get(origin)
      if (!stored || stored.value !== entry.value) {
        report(
          'dead-lettered-healthy',
          `${topic}@${entry.offset} (${entry.value}) names origin ${origin}, which holds ${stored?.value ?? 'nothing'}`,
          [entry, ...(stored ? [stored.ev] : [])],
        )
      } else if (!isPoison(entry.value) || x) {
        report(
          'dead-lettered-healthy',
          `${origin} (${entry.value}) is on ${topic} although ${x ? `${x.w} handled it` : 'its handler does not fail'}`,
          [entry, stored.ev, ...(x ? [x] : [])],
        )
      }
    }
    for (const [tp, offsets] of atOffset) {
      if (!tp.startsWith(`${input}/`) || tp.lastIndexOf('/') !== input.length) continue
      for (const [offset, { value, ev }] of offsets) {
        if (!isPoison(value) || invisible.has(value)) continue
        poison++
        if (!byOrigin.has(`${tp}@${offset}`))
          report('dead-letter-missing', `${tp}@${offset} (${value}) fails every time but is not on ${topic}`, [ev])
      }
    }
  }
  return poison
}

/** Idempotent, transactional and outbox messages are stored once; plain sends retried by the application may be twice. */
function checkWrites(acks: Ack[], placesOf: Places, report: Report): number {
  let allowed = 0
  const counted = new Set<string>()
  for (const a of acks) {
    const places = placesOf.get(a.value)
    if (!places || places.size < 2 || counted.has(a.value)) continue
    counted.add(a.value)
    if (a.via === 'eos') continue // an output twice is an eos-duplicate of its input
    if (a.via === 'send' || a.via === 'batch') allowed += places.size - 1
    else
      report('duplicate-write', `${a.value} (via ${a.via}) is stored ${places.size} times: ${[...places.keys()].join(', ')}`, [a, ...places.values()])
  }
  return allowed
}

/**
 * Nothing of an aborted, rolled-back, or never-committed transaction is ever visible — unless the same message was
 * also written by an attempt that may have committed (a consume-transform-produce retry writes the same output).
 */
function checkAborted(invisible: Map<string, HistoryEvent>, placesOf: Places, report: Report) {
  for (const [value, cause] of invisible) {
    const places = placesOf.get(value)
    if (!places) continue
    const why = cause.k === 'abort' ? (cause as Aborted).reason : 'its transaction never reached COMMIT'
    report('aborted-visible', `${value} is visible at ${[...places.keys()].join(', ')} although ${why}`, [cause, ...places.values()])
  }
}

/** Messages that must never be visible, with the event that says why (an abort, or a transaction never committed). */
function mustStayInvisible(history: HistoryEvent[]): Map<string, HistoryEvent> {
  const never = new Map<string, HistoryEvent>()
  const mayCommit = new Set<string>()
  const begun = new Map<string, TxnBegin>()
  const committing = new Set<string>()
  for (const e of history) {
    if (e.k === 'abort') for (const v of e.values) never.set(v, e)
    else if (e.k === 'ack') mayCommit.add(e.value)
    else if (e.k === 'amb') for (const v of e.values) mayCommit.add(v)
    else if (e.k === 'txb') begun.set(`${e.w}|${e.id}`, e)
    else if (e.k === 'txc') committing.add(`${e.w}|${e.id}`)
  }
  for (const [key, b] of begun) {
    // COMMIT announced: the outcome follows as ack or amb, or the writer died waiting for it
    if (committing.has(key)) for (const v of b.values) mayCommit.add(v)
    else for (const v of b.values) if (!never.has(v)) never.set(v, b)
  }
  for (const v of mayCommit) never.delete(v)
  return never
}

/** pgQueue's offsets are dense: every offset from the first seen to the last seen of a partition holds a message. */
function checkGaps(atOffset: Stored, lossy: Set<string>, report: Report) {
  for (const [tp, offsets] of atOffset) {
    if (lossy.has(tp.slice(0, tp.lastIndexOf('/')))) continue
    const sorted = [...offsets.keys()].sort((a, b) => (a < b ? -1 : 1))
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i] !== sorted[i - 1] + 1n) {
        report('gap', `${tp}: no message seen at offsets ${sorted[i - 1] + 1n}..${sorted[i] - 1n}`, [
          offsets.get(sorted[i - 1])!.ev,
          offsets.get(sorted[i])!.ev,
        ])
      }
    }
  }
}

/**
 * An acknowledged offset holds the acknowledged message. On a capped topic the row at the acknowledged offset may be
 * deleted before anyone reads it while an earlier copy (an application retry) was read: there only an offset seen
 * holding another message is a mismatch.
 */
function checkAckOffsets(acks: Ack[], placesOf: Places, atOffset: Stored, lossy: Set<string>, report: Report) {
  for (const a of acks) {
    if (a.offset === undefined || a.partition === undefined) continue
    const places = placesOf.get(a.value)
    const tp = tpKey(a.topic, a.partition)
    if (!places || places.has(`${tp}@${a.offset}`)) continue
    const there = atOffset.get(tp)?.get(BigInt(a.offset))
    if (!there && lossy.has(a.topic)) continue
    const holds = there ? `which holds ${there.value}` : 'never seen'
    report('ack-mismatch', `${a.value} acknowledged at ${tp}@${a.offset} (${holds}) but stored at ${[...places.keys()].join(', ')}`, [
      a,
      ...(there ? [there.ev] : []),
      ...places.values(),
    ])
  }
}

const DEADLOCK = /deadlock detected|40P01/
const SERIALIZATION = /could not serialize|40001/

/** Deadlocks, serialization failures of the caller's outbox transaction, stuck operations, an unfinished drain. */
function checkErrors(history: HistoryEvent[], report: Report) {
  for (const e of history) {
    if (e.k === 'err' && DEADLOCK.test(e.message)) report('deadlock', `${e.w} ${e.op}: ${e.message}`, [e])
    else if (e.k === 'err' && e.op.startsWith('outbox') && SERIALIZATION.test(e.message)) {
      report('serialization', `${e.w} ${e.op}: ${e.message}`, [e])
    } else if (e.k === 'stuck') report('stuck', `${e.w} ${e.op} pending for ${e.ms} ms`, [e])
    else if (e.k === 'stat' && e.name === 'pg.deadlocks' && e.n > 0)
      report('deadlock', `PostgreSQL counted ${e.n} deadlock(s) in the run's database`, [e])
    else if (e.k === 'stat' && e.name === 'drain.incomplete' && e.n > 0)
      report(
        'stuck',
        `the drain did not finish: ${e.n} message(s) still undelivered to a group, without their consume-transform-produce output, or not yet dead-lettered`,
        [e],
      )
  }
}
