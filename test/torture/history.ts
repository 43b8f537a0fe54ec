// The recorded history: one JSON object per line, appended synchronously (so a SIGKILL loses at most the event
// being written, never one already reported) by every worker process and the orchestrator, each to its own file.
// Every message value is unique in a run (`<worker>/<n>`), so values identify messages across producers, groups and
// the final audit; offsets are learned from deliveries.
import { openSync, readdirSync, readFileSync, writeSync } from 'node:fs'
import path from 'node:path'

/** A message's priority travels in its value (`…@p3`): consumers do not see the priority column. */
export const priorityTag = (priority: number) => `@p${priority}`
/** pgQueue's default priority is 5: an untagged message is in the same stream as one tagged 5. */
export const priorityOf = (value: string) => Number(/@p(\d)$/.exec(value)?.[1] ?? 5)

/** A poison message's value carries this tag (before its priority's): its handler fails every time. */
export const POISON_TAG = '!poison'
export const isPoison = (value: string) => value.includes(POISON_TAG)

export type Via = 'send' | 'batch' | 'idempotent' | 'txn' | 'outbox' | 'eos'

export interface Base {
  /** wall-clock ms of the machine (one machine, one clock; a worker's stepped clock is not used) */
  t: number
  /** writer: worker id with incarnation, e.g. `c2.1`, or `orch` */
  w: string
}

/** A send whose promise resolved (for txn/outbox: whose COMMIT returned). Offset when the transport said it. */
export interface Ack extends Base {
  k: 'ack'
  via: Via
  topic: string
  partition?: number
  offset?: string
  value: string
}

/** A send or transaction whose outcome is unknown (error after the request may have reached the server). */
export interface Ambiguous extends Base {
  k: 'amb'
  via: Via
  values: string[]
  error: string
}

/** Messages that must never become visible: an aborted transaction, a rolled-back outbox transaction. */
export interface Aborted extends Base {
  k: 'abort'
  via: Via
  values: string[]
  reason: string
}

/** Messages written in a transaction that was begun; if no outcome follows (the writer died), COMMIT was never sent. */
export interface TxnBegin extends Base {
  k: 'txb'
  id: string
  via: Via
  values: string[]
}

/** COMMIT is about to be sent for transaction `id`: from here the outcome is unknown until `ack`/`amb`. */
export interface TxnCommitting extends Base {
  k: 'txc'
  id: string
}

/** A handler was entered for (group, topic, partition); `h` pairs it with its `hl`. */
export interface HandlerEnter extends Base {
  k: 'he'
  g: string
  topic: string
  partition: number
  h: number
}

export interface HandlerLeave extends Base {
  k: 'hl'
  h: number
}

/** A message was handed to the application (member = w). */
export interface Delivery extends Base {
  k: 'd'
  g: string
  topic: string
  partition: number
  offset: string
  value: string
}

/** The application finished with the message (eachMessage returned, or resolveOffset was called for it). */
export interface Processed extends Base {
  k: 'x'
  g: string
  topic: string
  partition: number
  offset: string
}

/** A committed offset of a group, as reported by the consumer (COMMIT_OFFSETS), a committed sendOffsets, or a poll. */
export interface Commit extends Base {
  k: 'c'
  g: string
  topic: string
  partition: number
  offset: string
  src: 'event' | 'sendOffsets' | 'poll'
}

export interface Subscribe extends Base {
  k: 'sub'
  g: string
  topics: string[]
}

/** The member joined its group (GROUP_JOIN): after a stall, it may own partitions again. */
export interface Join extends Base {
  k: 'join'
  g: string
}

export interface Seek extends Base {
  k: 'seek'
  g: string
  topic: string
  partition: number
  offset: string
}

/** An operation the worker's watchdog saw pending beyond the bound (or a statement the orchestrator saw active). */
export interface Stuck extends Base {
  k: 'stuck'
  op: string
  ms: number
}

/** An error a client call raised (kept whole for deadlock and serialization detection). */
export interface ErrorEvent extends Base {
  k: 'err'
  op: string
  name: string
  message: string
}

export interface Fault extends Base {
  k: 'fault'
  f: FaultKind | 'cont' | 'respawn'
  target: string
  detail?: string
}

/** A worker process ended (the orchestrator saw it exit). */
export interface Exit extends Base {
  k: 'exit'
  target: string
  signal?: string | null
  code?: number | null
}

/** What the final audit consumer (a fresh group, from the beginning) found. */
export interface Audit extends Base {
  k: 'a'
  topic: string
  partition: number
  offset: string
  value: string
  /** a dead-letter entry's origin from its headers: `<topic>/<partition>@<offset>` */
  origin?: string
}

/** Free-form counters: operations by kind (per worker), PostgreSQL's deadlock counter, drain outcome. */
export interface Stat extends Base {
  k: 'stat'
  name: string
  n: number
}

export type FaultKind = 'kill' | 'stop' | 'terminate' | 'restart' | 'drop' | 'delay' | 'clock' | 'lock' | 'connections' | 'promote'

export type HistoryEvent =
  | Ack
  | Ambiguous
  | Aborted
  | TxnBegin
  | TxnCommitting
  | HandlerEnter
  | HandlerLeave
  | Delivery
  | Processed
  | Commit
  | Subscribe
  | Join
  | Seek
  | Stuck
  | ErrorEvent
  | Fault
  | Exit
  | Audit
  | Stat

type Omitted<E> = E extends HistoryEvent ? Omit<E, 't' | 'w'> : never

/**
 * Where a worker under the clock-step fault keeps the true Date.now (workers/clock.ts): the history's times are
 * the machine's, whatever the worker's own clock says.
 */
export const REAL_NOW = Symbol.for('torture.realNow')

export interface Recorder {
  readonly writer: string
  record(event: Omitted<HistoryEvent>): void
}

/** Appends to `<dir>/<writer>.jsonl`. */
export function createRecorder(dir: string, writer: string): Recorder {
  const fd = openSync(path.join(dir, `${writer}.jsonl`), 'a')
  const now = ((globalThis as Record<symbol, unknown>)[REAL_NOW] as (() => number) | undefined) ?? Date.now
  return {
    writer,
    record(event) {
      writeSync(fd, `${JSON.stringify({ t: now(), w: writer, ...event })}\n`)
    },
  }
}

/** Every event of a run, in time order (a torn last line of a killed writer is skipped). */
export function readHistory(dir: string): HistoryEvent[] {
  const events: HistoryEvent[] = []
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.jsonl'))) {
    for (const line of readFileSync(path.join(dir, name), 'utf8').split('\n')) {
      if (!line) continue
      try {
        events.push(JSON.parse(line) as HistoryEvent)
      } catch {
        // the line a SIGKILL cut short
      }
    }
  }
  return events.sort((a, b) => a.t - b.t)
}
