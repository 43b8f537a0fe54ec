import type { Logger } from 'kafkajs'
import type { PriorityBand } from '../config/types.js'
import { consumerEvents, type InstrumentationEmitter } from '../kafkajs/instrumentation.js'
import type { FetchBounds, FetchedPartition, FetchLimit, ReadHorizon } from '../store/fetch.js'
import { selectBatches } from './bandSelection.js'
import { toKafkaMessage, type DeliveredMessage } from './batch.js'
import type { OffsetManager } from './offsetManager.js'
import type { PartitionState } from './partitionState.js'
import { rangeFor } from './readFloors.js'

/** Where rows come from (store/fetch.ts in production, a fake in unit tests). */
export interface FetchSource {
  /** up to `limit.rows` rows per priority and `limit.bytesPerPartition` payload bytes per partition above each
   * partition's positions; aligned with `partitions`, null = fenced */
  fetch(partitions: PartitionState[], limit: FetchLimit, bulk: boolean, bounds: FetchBounds): Promise<Array<FetchedPartition | null>>
  watermarks(topicId: string, partition: number): Promise<{ low: bigint; high: bigint }>
}

/** What one round delivers from one partition: consecutive batches, processed in order. */
export interface PartitionWork {
  state: PartitionState
  batches: DeliveredMessage[][]
}

export interface FetchManagerOptions {
  source: FetchSource
  offsets: OffsetManager
  emitter: InstrumentationEmitter<typeof consumerEvents>
  logger: Logger
  groupId: string
  bands: readonly PriorityBand[]
  /** messages per batch (DATAHUB_PGQUEUE_CONSUMER_MAX_BATCH_MESSAGES) */
  perBatch: number
  maxBytesPerPartition: number
  /** payload bytes one fetch may return over all partitions (KafkaJS's maxBytes) */
  maxBytes: number
  /** the subscription's reset rule for a topic: true = earliest */
  fromBeginning: (topic: string) => boolean
  /** the fetch fence refused a partition: this member must re-read its group (rebalance, lost lease) */
  onFenced: (state: PartitionState) => void
}

/**
 * Rows one fetch round asks for across all partitions, in whole batches (at least one batch per partition, at most
 * MAX_BATCHES_PER_ROUND). A round has a fixed cost (planning the bulk fetch, a round trip, a commit) of roughly a
 * few hundred rows' worth: one partition read in 500-row rounds drains at about 75,000 msg/s here, in 2,000-row
 * rounds at 95,000 to 130,000 and in 4,000-row rounds at 130,000 to 150,000; larger rounds gained nothing more
 * (docs/performance.md). Memory: a round plus the prefetched next one, each at most maxBytes of payload
 * (maxBytesPerPartition per partition, less when maxBytes / partitions is smaller), however many rows that is.
 */
const ROUND_ROWS = 4000
const MAX_BATCHES_PER_ROUND = 8
/** How old the last read horizon may be before a fetch asks for a new one (a pass over pg_stat_activity). */
const HORIZON_EVERY_MS = 2000

/** A fetch's rows, and the read horizon of the last fetch that had finished before it was sent (readFloors.ts). */
interface Fetched {
  parts: Array<FetchedPartition | null>
  before: ReadHorizon | undefined
}

/** The next round's fetch, issued while the current round's batches are processed. */
interface Prefetch {
  states: PartitionState[]
  /** each state's fetch positions when the fetch was issued: the rows are valid only if nothing moved them */
  positions: bigint[][]
  result: Promise<Fetched | undefined>
}

/**
 * Fetch rounds: seeks applied first, one statement for every partition, the rows cut into batches by band
 * selection, the next round prefetched while this one is processed (used only if nothing moved the partitions
 * meanwhile), and the worker pool that runs a round's batches with at most `concurrency` partitions at a time.
 */
export class FetchManager {
  private prefetch?: Prefetch
  /** rows the last fetch returned, and their mean payload size, for choosing how to fetch next. The first fetch is
   * bulk: a member that starts usually meets a backlog, and the small form's plan can choose to read a band whole
   * and sort it when the statistics predate the topic's rows (src/store/fetch.ts, copyText) */
  private lastFetchRows = Number.POSITIVE_INFINITY
  private lastRowBytes = 0
  /** the per-priority row limit of the fetch whose rows are being cut into batches */
  private rowLimit = 0
  /** the last read horizon a finished fetch returned, when it was sent, and the clock's epoch then */
  private horizon?: { value: ReadHorizon; sentAt: number; epoch: number }
  /** every partition of the last round's fetch was drained: a fetch right after it would find nothing new, unless
   * one of them moved back since (`moves` when the round was fetched) */
  private drained = false
  private drainedStates: Array<{ state: PartitionState; moves: number }> = []

  constructor(private readonly o: FetchManagerOptions) {}

  /** One round over these partitions (the runner passes the held, unpaused, unrevoked ones). */
  async round(states: PartitionState[], prefetchNext: boolean): Promise<PartitionWork[]> {
    const { emitter } = this.o
    await this.applySeeks(states)
    const prefetched = await this.takePrefetch(states)
    if (states.length === 0) return []
    const started = Date.now()
    emitter.emit(consumerEvents.FETCH_START, { nodeId: 'pgqueue' })
    const perRound = this.batchesPerRound(states.length)
    const { parts: fetched, before } = prefetched ?? (await this.fetch(states))
    emitter.emit(consumerEvents.FETCH, {
      numberOfBatches: fetched.filter((f) => f && f.rows.length > 0).length,
      duration: Date.now() - started,
      nodeId: 'pgqueue',
    })
    const work: PartitionWork[] = []
    fetched.forEach((f, i) => {
      const state = states[i]
      if (!f) return this.o.onFenced(state)
      state.highWatermark = f.highWatermark
      const limits = {
        bands: this.o.bands,
        perBatch: this.o.perBatch,
        count: perRound,
        maxBytes: this.o.maxBytesPerPartition,
        fetchLimit: this.rowLimit,
      }
      const batches = selectBatches(f.rows, limits).map((rows) => rows.map((r) => toKafkaMessage(r, state.topic, state.partition)))
      for (const delivered of batches) for (const d of delivered) state.delivered(d.seq, d.priority)
      state.readFloors.afterFetch(f, before, state.positions, this.o.offsets.clock.epoch)
      if (batches.length === 0) return
      work.push({ state, batches })
    })
    this.drained = fetched.every((f) => !f || f.drained)
    this.drainedStates = states.map((state) => ({ state, moves: state.moves }))
    // a round that drained every partition leaves nothing to prefetch: the next rows come with a NOTIFY
    if (work.length > 0 && prefetchNext && !this.drained) {
      const result = this.fetch(states).catch(() => undefined)
      this.prefetch = { states, positions: states.map((s) => [...s.positions]), result }
    }
    return work
  }

  /**
   * A round with nothing to fetch (every partition held is paused, or none is assigned): KafkaJS's fetch then waits
   * maxWaitTimeInMs and returns nothing, and still emits FETCH_START and FETCH, which code waiting for the next
   * fetch relies on. The runner's idle wait that follows is that maxWaitTimeInMs.
   */
  emptyRound(): void {
    const { emitter } = this.o
    emitter.emit(consumerEvents.FETCH_START, { nodeId: 'pgqueue' })
    emitter.emit(consumerEvents.FETCH, { numberOfBatches: 0, duration: 0, nodeId: 'pgqueue' })
  }

  discardPrefetch(): void {
    this.prefetch = undefined
  }

  /** The last round's fetch returned every row its partitions had (none was cut by the row limit or byte budget). */
  get lastRoundDrained(): boolean {
    return this.drained && this.drainedStates.every(({ state, moves }) => state.moves === moves && state.pendingSeek === undefined && !state.revoked)
  }

  /**
   * Runs a round's batches, at most `concurrency` partitions at a time, each partition's batches in order. The
   * rest of a partition's batches run only while nothing moved it (rewind after a partial resolve, seek, pause,
   * revoke); batches left undelivered, or that never ran (stop, another partition's failure), are fetched again.
   */
  async runWorkers(
    work: PartitionWork[],
    concurrency: number,
    process: (state: PartitionState, delivered: DeliveredMessage[]) => Promise<void>,
    running: () => boolean,
    mayDeliver: (state: PartitionState) => Promise<boolean>,
  ): Promise<void> {
    const queue = [...work]
    const unfinished = new Set(work)
    let failed = false
    const worker = async () => {
      for (let w = queue.shift(); w && running() && !failed; w = queue.shift()) {
        const { state } = w
        const positions = [...state.positions]
        let done = 0
        for (const delivered of w.batches) {
          if (!running() || !(await mayDeliver(state))) break
          await process(state, delivered)
          done++
          if (state.revoked || state.pendingSeek !== undefined) break
          if (state.positions.some((seq, p) => seq !== positions[p])) break
        }
        if (done < w.batches.length) state.rewind()
        unfinished.delete(w)
      }
    }
    // every worker finishes its batch before a failure is thrown: nothing may rebalance under a running handler
    const settled = await Promise.allSettled(
      Array.from({ length: Math.min(concurrency, work.length) }, () => worker().catch((e) => ((failed = true), Promise.reject(e)))),
    )
    for (const w of unfinished) w.state.rewind()
    const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failure) throw failure.reason
  }

  private batchesPerRound(partitions: number): number {
    return Math.max(1, Math.min(MAX_BATCHES_PER_ROUND, Math.floor(ROUND_ROWS / (partitions * this.o.perBatch))))
  }

  /**
   * A backlog is read in bulk (binary COPY: cheapest per row, but planned each time); a consumer that is keeping up
   * reads the few new rows with the prepared statement, which answers faster. The last fetch decides.
   */
  private async fetch(states: PartitionState[]): Promise<Fetched> {
    const { perBatch, maxBytes, maxBytesPerPartition } = this.o
    const bytesPerPartition = Math.max(1, Math.min(maxBytesPerPartition, Math.floor(maxBytes / states.length)))
    // the statement reads up to `rows` per priority before the byte budget cuts them: ask for about as many as the
    // budget holds at the last fetch's row size, so large messages are not read only to be dropped
    const byBytes = this.lastRowBytes > 0 ? Math.ceil((bytesPerPartition / this.lastRowBytes) * 1.25) + 1 : Infinity
    const limit = { rows: Math.max(1, Math.min(perBatch * this.batchesPerRound(states.length), byBytes)), bytesPerPartition }
    this.rowLimit = limit.rows
    const bulk = this.lastFetchRows >= perBatch
    const { fetched, before } = await this.boundedFetch(states, limit, bulk)
    let rows = 0
    let bytes = 0
    for (const f of fetched) {
      for (const r of f?.rows ?? []) {
        rows++
        bytes += r.payloadBytes
      }
    }
    this.lastFetchRows = rows
    if (rows > 0) this.lastRowBytes = Math.max(1, bytes / rows)
    return { parts: fetched, before }
  }

  /**
   * One fetch, its rows read in the enqueued_at range the partitions' read floors give (readFloors.ts), with the
   * horizon of the last fetch that finished before it was sent (valid for the floors this one records). When the
   * server's clock turns out to have been set back, the rows are dropped and read again unbounded.
   */
  private async boundedFetch(
    states: PartitionState[],
    limit: FetchLimit,
    bulk: boolean,
  ): Promise<{ fetched: Array<FetchedPartition | null>; before: ReadHorizon | undefined }> {
    const clock = this.o.offsets.clock
    const sentAt = clock.now()
    const known = this.horizon?.epoch === clock.epoch ? this.horizon : undefined
    const horizon = !known || sentAt - known.sentAt >= HORIZON_EVERY_MS
    const range = rangeFor(
      states.map((s) => s.readFloors.boundsFor(s.positions, clock.epoch)),
      clock,
    )
    let fetched = await this.o.source.fetch(states, limit, bulk, { range, horizon })
    let first = fetched.find((f) => f)
    let before = known?.value
    if (first && !clock.observe(first.serverNow, sentAt)) {
      this.o.logger.warn('The database server clock went back: reading without time bounds until it is trusted again', {
        groupId: this.o.groupId,
      })
      before = undefined
      if (range) {
        fetched = await this.o.source.fetch(states, limit, bulk, { horizon: true })
        first = fetched.find((f) => f)
        if (first) clock.observe(first.serverNow, sentAt)
      }
    }
    if (first?.horizon) this.horizon = { value: first.horizon, sentAt, epoch: clock.epoch }
    return { fetched, before }
  }

  /**
   * The prefetched round, if it is still exactly what a fetch now would ask for: the same partitions, none of them
   * moved since (rewind after a failure, partial resolve or pause, seek, revocation) and rows in it. Anything else
   * is discarded and fetched afresh (an empty prefetch too: it may predate a NOTIFY).
   */
  private async takePrefetch(states: PartitionState[]): Promise<Fetched | undefined> {
    const pre = this.prefetch
    this.prefetch = undefined
    if (!pre) return undefined
    const result = await pre.result
    if (!result || pre.states.length !== states.length) return undefined
    for (let i = 0; i < states.length; i++) {
      const s = states[i]
      if (pre.states[i] !== s || s.revoked || s.pendingSeek !== undefined) return undefined
      const before = pre.positions[i]
      for (let p = 0; p < before.length; p++) if (before[p] !== s.positions[p]) return undefined
    }
    return result.parts.some((f) => f && f.rows.length > 0) ? result : undefined
  }

  /** Applies seeks before fetching: '-1' is the log end, '-2' the first retained offset. */
  private async applySeeks(states: PartitionState[]): Promise<void> {
    const { groupId, logger, offsets } = this.o
    for (const state of states) {
      if (state.pendingSeek === undefined) continue
      let seq = state.pendingSeek
      const { low, high } = await this.o.source.watermarks(state.topicId, state.partition)
      if (seq === -1n) seq = high
      else if (seq === -2n) seq = low
      else if (seq > high) {
        // past the end of the log the partition would deliver nothing, silently: reset as Kafka does
        const reset = this.o.fromBeginning(state.topic) ? low : high
        logger.warn('Seek past the end of the log; resetting', {
          groupId,
          topic: state.topic,
          partition: state.partition,
          offset: seq.toString(),
          highWatermark: high.toString(),
          resetTo: reset.toString(),
        })
        seq = reset
      }
      state.seekTo(seq)
      await offsets.commitSeek(state, seq)
    }
  }
}
