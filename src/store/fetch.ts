import pg from 'pg'
import type { Queryable } from '../db/database.js'
import { observed } from '../db/roundTrips.js'
import type { Tables } from '../db/tables.js'
import { readRange, type ReadRange } from './readBounds.js'
import { statements } from './statement.js'
import { WITHOUT_SORT_PLANS } from './transactions.js'

/** A stored message as the consumer reads it. */
export interface FetchedRow {
  seq: string
  priority: number
  routingKey: string
  messageKey: Buffer | null
  flags: number
  payload: Buffer
  compression: number
  headers: unknown
  timestampMs: string
  /** enqueued_at in ms: the queue-time metric measures from here even when the producer set a timestamp */
  enqueuedAtMs: string
  payloadBytes: number
}

export interface FetchedPartition {
  /** next_seq - 1: the Kafka log-end offset */
  highWatermark: string
  rows: FetchedRow[]
  /** every priority's rows above the positions were returned (none was cut by the row limit or the byte budget) */
  drained: boolean
  /** the server's statement_timestamp() (microseconds since 1970) */
  serverNow: bigint
  /** the read horizon, when asked for (microseconds since 1970): lo null when it could not be known */
  horizon?: ReadHorizon
}

/** migrations/R__read_horizon.sql: no row not visible yet has an enqueued_at before lo (null: unknown) or after hi. */
export interface ReadHorizon {
  lo: bigint | null
  hi: bigint
}

export const PRIORITY_LEVELS = 10

/**
 * One statement per fetch round, for every partition the member owns: for each priority, the next rows above that
 * priority's position (rows of one priority are in seq order; the caller splits the budget across priority bands).
 * The ledger row comes first so an empty partition still reports its high watermark.
 *
 * Two ways to run it, both measured (docs/performance.md):
 * - bulk: `COPY (SELECT ...) TO STDOUT (FORMAT binary)`, parsed here. Payloads arrive as raw bytes and numbers as
 *   numbers, one protocol message per row and no per-column strings, where a plain SELECT ships bytea as text and
 *   node-postgres builds a string per column and an object per row: on 2,000-row rounds 40 % less time per fetch
 *   and a third less CPU on both sides. COPY takes no parameters, so the values are written into the text (they
 *   are all numbers and timestamps, checked as such) and the statement is planned every time.
 * - small: the same SELECT with parameters, payload as base64 (a third more bytes than raw; bytea's own text form,
 *   hex, is twice as many and slower on both sides), rows as arrays of unparsed text. Used when little is expected
 *   (a consumer keeping up, woken by NOTIFY). Named: parsed once per connection.
 * Both read only the time partitions the enqueued_at range covers (docs/decisions/scale-011-read-horizon.md): the
 * bulk form has the range as constants, the small form as parameters, pruned at planning (custom plans) or at
 * executor start (the plan cache's generic plan), so neither grows with the partitions.
 *
 * No ORDER BY: the nested loops produce each partition's rows by priority then seq, and fetchPartitions checks
 * that (sorting only if needed). The per-priority range is a row comparison so that only the dequeue index serves
 * it, whatever the statistics say (see the commit statement in offsets.ts). `priority >= 0` (always true: the
 * column's CHECK) is there for a time partition no ANALYZE has seen yet: without statistics the planner rates the
 * enqueued_at range (an index condition on the unique (topic, partition, seq, enqueued_at) key) as more selective
 * than the row comparison, and read every row of the partition once per priority to sort them (a freshly filled
 * partition of 600,000 rows: 4 s per fetch, 1,400 msg/s); a second bound on priority makes the dequeue index the
 * more selective one then too (9 ms).
 *
 * Per row the server does as little as it can (docs/performance.md, "the byte budget"): the running sum is over
 * payload_bytes as int4, so it is summed in an int8 instead of a numeric (sum(int8) is numeric), with a ROWS frame
 * (no peer groups to look ahead for); enqueued_at goes out as the binary timestamp in the bulk form and is turned
 * into milliseconds here, rounded as `(extract(epoch FROM enqueued_at) * 1000)::int8` (the small form's and
 * offsetsByTimestamp's expression) rounds: extract is numeric arithmetic, a quarter of the server's time per row.
 * The timestamp (the producer's, else enqueued_at) is chosen here.
 */
function selectText(
  t: Tables,
  bulk: boolean,
  args: {
    topics: string
    ids: string
    positions: string
    limit: string
    bytes: string
    group: string
    owner: string
    generation: string
    lo: string
    hi: string
    horizon: string
  },
): string {
  const us = (ts: string) => `(extract(epoch FROM ${ts}) * 1000000)::int8`
  return `
    SELECT p.idx::int4, s.next_seq - 1, ${us('statement_timestamp()')}, ${us('h.lo')}, ${us('h.hi')}, m.*
    FROM unnest(${args.topics}::int8[], ${args.ids}::int4[]) WITH ORDINALITY AS p(topic_id, partition_id, idx)
    LEFT JOIN (SELECT * FROM ${t.readHorizon}() WHERE ${args.horizon}::bool) AS h ON true
    JOIN ${t.groupGeneration} g ON g.consumer_group = ${args.group}::text AND g.generation = ${args.generation}::int8
    JOIN ${t.partitionLease} l ON l.consumer_group = g.consumer_group AND l.topic_id = p.topic_id
      AND l.partition_id = p.partition_id AND l.lock_owner = ${args.owner}::text AND l.generation = g.generation
      AND l.locked_until > now()
    JOIN ${t.partitionSeq} s ON s.topic_id = p.topic_id AND s.partition_id = p.partition_id
    LEFT JOIN LATERAL (
      SELECT b.enqueue_seq, b.priority, b.kafka_flags, b.payload_compression, b.routing_key, b.message_key,
             ${bulk ? 'b.payload' : "encode(b.payload, 'base64')"}, b.headers::text, b.message_timestamp,
             ${bulk ? 'b.enqueued_at' : '(extract(epoch FROM b.enqueued_at) * 1000)::int8'}
      FROM generate_series(0, ${PRIORITY_LEVELS - 1}) AS pr(priority)
      CROSS JOIN LATERAL (
        SELECT x.* FROM (
          SELECT y.*, sum(y.payload_bytes::int4) OVER (ORDER BY y.priority, y.enqueue_seq ROWS UNBOUNDED PRECEDING) AS fetched_bytes
          FROM ${t.message} y
          WHERE y.topic_id = p.topic_id AND y.partition_id = p.partition_id
            AND (y.priority, y.enqueue_seq) > (pr.priority::int2, (${args.positions}::int8[])[(p.idx - 1) * ${PRIORITY_LEVELS} + pr.priority + 1])
            AND y.priority <= pr.priority::int2 AND y.priority >= 0::int2
            AND y.enqueued_at >= ${t.partitionFloor}(${args.lo}::timestamptz) AND y.enqueued_at <= ${args.hi}::timestamptz
          ORDER BY y.priority, y.enqueue_seq
          LIMIT ${args.limit}
        ) x
        -- the byte budget: rows come in index order, the first always, however large
        WHERE x.fetched_bytes - x.payload_bytes < ${args.bytes}
      ) b
    ) m ON true`
}

const sql = statements('fetch', (t) => ({
  fetch: selectText(t, false, {
    topics: '$1',
    ids: '$2',
    positions: '$3',
    limit: '$4',
    group: '$5',
    owner: '$6',
    generation: '$7',
    bytes: '$8',
    lo: '$9',
    hi: '$10',
    horizon: '$11',
  }),
}))

function copyText(t: Tables, fence: FetchFence, partitions: PartitionFetch[], limit: FetchLimit, bounds: FetchBounds): string {
  const list = (values: string[]) => `'{${values.join(',')}}'`
  const range = readRange(bounds.range)
  const select = selectText(t, true, {
    topics: list(partitions.map((p) => digits(p.topicId))),
    ids: list(partitions.map((p) => digits(p.partition))),
    positions: list(partitions.flatMap((p) => p.positions.map(digits))),
    limit: digits(limit.rows),
    bytes: digits(limit.bytesPerPartition),
    // COPY takes no parameters: the two strings go in as literals, quoted by node-postgres
    group: pg.escapeLiteral(fence.group),
    owner: pg.escapeLiteral(fence.lockOwner),
    generation: digits(fence.generation),
    // timestamps this module wrote itself (readBounds.ts), as literals: constants the planner prunes partitions by
    lo: `'${range.lo}'`,
    hi: `'${range.hi}'`,
    horizon: bounds.horizon ? 'true' : 'false',
  })
  // One simple query is one implicit transaction: SET LOCAL holds for the COPY only. Why without sorts (statistics
  // that predate the topic's rows made every fetch read and sort the whole backlog): plannedWithoutSorts.
  return `${WITHOUT_SORT_PLANS}; COPY (${select}) TO STDOUT (FORMAT binary)`
}

/** A non-negative integer as decimal digits: the only values copyText writes into the statement. */
function digits(value: string | number | bigint): string {
  const text = String(value)
  if (!/^\d{1,19}$/.test(text)) throw new RangeError(`fetch: expected a non-negative integer, got ${JSON.stringify(text)}`)
  return text
}

/** Per partition: rows per priority, and payload bytes over all its priorities (the first row always comes). */
export interface FetchLimit {
  rows: number
  bytesPerPartition: number
}

/** Who fetches: only partitions this owner holds a live lease of, in the group's current generation, are read. */
export interface FetchFence {
  group: string
  lockOwner: string
  generation: number
}

export interface PartitionFetch {
  topicId: string
  partition: number
  /** processed-through seq per priority 0..9 */
  positions: readonly bigint[]
}

/**
 * The enqueued_at range every partition's rows are read in (src/consumer/readFloors.ts; undefined = all), and
 * whether to read the horizon too (it costs a pass over pg_stat_activity: asked for every few seconds).
 */
export interface FetchBounds {
  range?: ReadRange
  horizon: boolean
}

/**
 * Reads up to `limit.rows` rows per priority of every partition, and up to `limit.bytesPerPartition` payload bytes
 * per partition (in priority then seq order), in one round trip. The result is aligned with
 * `partitions`; an entry is null when the fence refused that partition (not held by this owner in the group's
 * current generation, or the lease lapsed). `bulk` when many rows are expected.
 */
export async function fetchPartitions(
  db: Queryable,
  t: Tables,
  fence: FetchFence,
  partitions: PartitionFetch[],
  limit: FetchLimit,
  bulk = false,
  bounds: FetchBounds = { horizon: false },
): Promise<Array<FetchedPartition | null>> {
  const out = bulk ? await copyFetch(db, t, fence, partitions, limit, bounds) : await selectFetch(db, t, fence, partitions, limit, bounds)
  for (const entry of out) {
    if (!entry) continue
    if (!inOrder(entry.rows)) entry.rows.sort(byPriorityThenSeq)
    entry.drained = !anyBandCut(entry.rows, limit)
  }
  return out
}

/**
 * Whether a priority band may hold more rows than came back: it filled the row limit, or its rows reach the byte
 * budget (the row after them, if any, was left out). Counted here rather than by the statement: windows over each
 * band and over the result cost the server a tuple store and a sort per fetch. A band whose rows reach the budget
 * exactly with nothing after it counts as cut too: the member fetches again at once and finds it drained.
 */
export function anyBandCut(rows: readonly FetchedRow[], limit: FetchLimit): boolean {
  let priority = -1
  let count = 0
  let bytes = 0
  for (const r of rows) {
    if (r.priority !== priority) {
      priority = r.priority
      count = 0
      bytes = 0
    }
    count++
    bytes += r.payloadBytes
    if (count >= limit.rows || bytes >= limit.bytesPerPartition) return true
  }
  return false
}

async function copyFetch(
  db: Queryable,
  t: Tables,
  fence: FetchFence,
  partitions: PartitionFetch[],
  limit: FetchLimit,
  bounds: FetchBounds,
): Promise<Array<FetchedPartition | null>> {
  const text = copyText(t, fence, partitions, limit, bounds)
  const copy = new CopyOut(text, partitions.length)
  // a pool answers through copy.callback (and returns a promise); a client runs the submittable as it is
  await observed(db, text, [], async () => {
    const running = (db.query as (q: unknown) => unknown)(copy)
    await (running instanceof Promise ? running : copy.done)
  })
  return copy.out
}

/** The small form's columns, as unparsed text: idx, high, server now, horizon lo and hi (µs), seq, priority, flags,
 * compression, routing_key, message_key (bytea hex), payload (base64), headers (json), message_timestamp,
 * enqueued_at ms. */
type RawRow = Array<string | null>

const RAW_TEXT = { getTypeParser: () => (value: string) => value }

async function selectFetch(
  db: Queryable,
  t: Tables,
  fence: FetchFence,
  partitions: PartitionFetch[],
  limit: FetchLimit,
  bounds: FetchBounds,
): Promise<Array<FetchedPartition | null>> {
  const stmt = sql(t).fetch
  const range = readRange(bounds.range)
  const values = [
    partitions.map((p) => p.topicId),
    partitions.map((p) => p.partition),
    partitions.flatMap((p) => p.positions.map(String)),
    limit.rows,
    fence.group,
    fence.lockOwner,
    fence.generation,
    limit.bytesPerPartition,
    range.lo,
    range.hi,
    bounds.horizon,
  ]
  // Named: parsed and analyzed once per connection (as an unnamed statement 0.35 ms of the server's time per fetch,
  // a third of a keeping-up round). The plan cache then chooses per execution: custom plans hold only the time
  // partitions in the range, and a generic plan, where it wins, prunes the others at executor start ("Subplans
  // Removed"), so neither grows with the partitions (docs/performance.md, 2026-12-04 night).
  const res = await observed(db, stmt.text, values, () =>
    db.query<RawRow>({ name: stmt.name, text: stmt.text, values, rowMode: 'array', types: RAW_TEXT }),
  )
  const out: Array<FetchedPartition | null> = partitions.map(() => null)
  for (const r of res.rows) {
    const entry = (out[Number(r[0]) - 1] ??= {
      highWatermark: r[1]!,
      rows: [],
      drained: true,
      serverNow: BigInt(r[2]!),
      ...(r[4] === null ? {} : { horizon: { lo: r[3] === null ? null : BigInt(r[3]), hi: BigInt(r[4]) } }),
    })
    const seq = r[5]
    if (seq === null) continue
    const payload = Buffer.from(r[11]!, 'base64')
    const messageKey = r[10]
    const headers = r[12]
    const enqueuedAtMs = r[14]!
    entry.rows.push({
      seq,
      priority: Number(r[6]),
      flags: Number(r[7]),
      compression: Number(r[8]),
      routingKey: r[9]!,
      messageKey: messageKey === null ? null : Buffer.from(messageKey.slice(2), 'hex'),
      payload,
      headers: headers === null ? null : JSON.parse(headers),
      timestampMs: r[13] ?? enqueuedAtMs,
      enqueuedAtMs,
      payloadBytes: payload.length,
    })
  }
  return out
}

const COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1')
const COPY_HEADER_BYTES = COPY_SIGNATURE.length + 8

/**
 * node-postgres "submittable" running one COPY ... TO STDOUT (FORMAT binary) with the simple query protocol and
 * decoding each row as it arrives (the protocol parser reuses its buffer, so nothing is kept by reference).
 */
class CopyOut {
  readonly out: Array<FetchedPartition | null>
  readonly done: Promise<void>
  callback?: (err: Error | null, result?: unknown) => void
  private settle!: (err: Error | null) => void
  private error: Error | null = null
  private settled = false

  constructor(
    private readonly text: string,
    partitions: number,
  ) {
    this.out = new Array<FetchedPartition | null>(partitions).fill(null)
    let resolve!: () => void
    let reject!: (e: Error) => void
    this.done = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)))
    this.done.catch(() => undefined)
    this.settle = (err) => {
      if (this.settled) return
      this.settled = true
      if (err) reject(err)
      else resolve()
      this.callback?.(err, this.out)
    }
  }

  submit(connection: { query(text: string): void }): void {
    connection.query(this.text)
  }

  handleCopyData(msg: { chunk: Buffer }): void {
    if (this.error) return
    try {
      this.row(msg.chunk)
    } catch (e) {
      this.error = e as Error
    }
  }

  handleReadyForQuery(): void {
    this.settle(this.error)
  }

  handleError(err: Error): void {
    this.settle(err)
  }

  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}

  /** One CopyData message: the file header, one row, or the trailer (-1). */
  private row(b: Buffer): void {
    let o = 0
    if (b.length >= COPY_HEADER_BYTES && b.subarray(0, COPY_SIGNATURE.length).equals(COPY_SIGNATURE)) {
      o = COPY_HEADER_BYTES + b.readInt32BE(COPY_HEADER_BYTES - 4)
      if (o >= b.length) return
    }
    if (b.readInt16BE(o) === -1) return
    o += 2
    // each field: int32 length (-1 = NULL), then its bytes
    let len = b.readInt32BE(o)
    const idx = b.readInt32BE(o + 4)
    o += 4 + len
    len = b.readInt32BE(o)
    const high = int8(b, o + 4)
    o += 4 + len
    const serverNow = b.readBigInt64BE(o + 4)
    o += 12
    len = b.readInt32BE(o)
    const lo = len < 0 ? null : b.readBigInt64BE(o + 4)
    o += 4 + Math.max(len, 0)
    len = b.readInt32BE(o)
    const hi = len < 0 ? null : b.readBigInt64BE(o + 4)
    o += 4 + Math.max(len, 0)
    const entry = (this.out[idx - 1] ??= {
      highWatermark: high,
      rows: [],
      drained: true,
      serverNow,
      ...(hi === null ? {} : { horizon: { lo, hi } }),
    })
    len = b.readInt32BE(o)
    if (len < 0) return // a partition with no rows
    const seq = int8(b, o + 4)
    o += 4 + len
    const priority = b.readInt16BE(o + 4)
    o += 6
    const flags = b.readInt16BE(o + 4)
    o += 6
    const compression = b.readInt16BE(o + 4)
    o += 6
    len = b.readInt32BE(o)
    const routingKey = len > 0 ? b.toString('utf8', o + 4, o + 4 + len) : ''
    o += 4 + len
    len = b.readInt32BE(o)
    const messageKey = len < 0 ? null : Buffer.from(b.subarray(o + 4, o + 4 + len))
    o += 4 + Math.max(len, 0)
    len = b.readInt32BE(o)
    const payload = Buffer.from(b.subarray(o + 4, o + 4 + len))
    o += 4 + len
    len = b.readInt32BE(o)
    const headers: unknown = len < 0 ? null : JSON.parse(b.toString('utf8', o + 4, o + 4 + len))
    o += 4 + Math.max(len, 0)
    len = b.readInt32BE(o)
    const timestamp = len < 0 ? null : int8(b, o + 4)
    o += 4 + Math.max(len, 0)
    const enqueuedAtMs = timestamptzMs(b, o + 4)
    entry.rows.push({
      seq,
      priority,
      flags,
      compression,
      routingKey,
      messageKey,
      payload,
      headers,
      timestampMs: timestamp ?? enqueuedAtMs,
      enqueuedAtMs,
      payloadBytes: payload.length,
    })
  }
}

/** A binary int8 as decimal text (exact beyond 2^53 too). */
function int8(b: Buffer, o: number): string {
  const hi = b.readInt32BE(o)
  const lo = b.readUInt32BE(o + 4)
  if (hi >= 0 && hi < 0x200000) return String(hi * 4294967296 + lo)
  return b.readBigInt64BE(o).toString()
}

/** Microseconds from 1970 to 2000, PostgreSQL's epoch for binary timestamps. */
const PG_EPOCH_US = 946_684_800_000_000

/**
 * A binary timestamptz (int8 microseconds since 2000-01-01 UTC) as milliseconds since 1970 in decimal text,
 * rounded half away from zero as numeric's cast to int8 rounds `extract(epoch FROM ts) * 1000`. In doubles while
 * exact (years 1715 to 2284), else in BigInt.
 */
export function timestamptzMs(b: Buffer, o: number): string {
  const hi = b.readInt32BE(o)
  if (hi > -0x100000 && hi < 0x100000) {
    const us = hi * 4294967296 + b.readUInt32BE(o + 4) + PG_EPOCH_US
    const half = Math.abs(us) + 500
    const ms = (half - (half % 1000)) / 1000
    return String(us < 0 ? -ms : ms)
  }
  const us = b.readBigInt64BE(o) + BigInt(PG_EPOCH_US)
  const ms = ((us < 0n ? -us : us) + 500n) / 1000n
  return (us < 0n ? -ms : ms).toString()
}

/** seq is int8 as text without leading zeros: a shorter string is a smaller number. */
const seqLess = (a: string, b: string): boolean => a.length < b.length || (a.length === b.length && a < b)

const byPriorityThenSeq = (a: FetchedRow, b: FetchedRow): number =>
  a.priority !== b.priority ? a.priority - b.priority : seqLess(a.seq, b.seq) ? -1 : a.seq === b.seq ? 0 : 1

function inOrder(rows: FetchedRow[]): boolean {
  for (let i = 1; i < rows.length; i++) if (byPriorityThenSeq(rows[i - 1], rows[i]) > 0) return false
  return true
}
