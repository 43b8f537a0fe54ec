// KafkaJS's per-broker request queue for a client's database work: with maxInFlightRequests, at most that many
// operations have statements in flight at once and the others wait in arrival order (KafkaJS queues the requests
// beyond the cap the same way); every change of the queue's length is reported, as KafkaJS's
// *.network.request_queue_size.

/** One operation's hold on the queue, given to the statements it issues (db/roundTrips.ts's observer). */
export interface OperationSlot {
  /** before each statement: resolves once the statement may go, to what it calls when it is done */
  before: () => Promise<() => void>
  /** the operation's own promise settled: its slot goes once no statement it started is still running */
  end(): void
  /** how long the operation's first statement waited for the slot (ms), then 0 */
  takePendingDuration(): number
}

export class RequestQueue {
  private inFlight = 0
  private readonly pending: Array<() => void> = []

  /** `cap`: a positive integer, or anything else for no cap (KafkaJS's default) */
  constructor(
    cap: number | null | undefined,
    private readonly onQueueSize: (queueSize: number) => void,
  ) {
    this.cap = Number.isInteger(cap) && (cap as number) > 0 ? (cap as number) : Infinity
  }

  readonly cap: number

  get capped(): boolean {
    return this.cap !== Infinity
  }

  /**
   * A slot taken at the operation's first statement (an operation that sends none, metadata from a cache, takes
   * none) and held until the operation has ended and every statement it started has finished: statements a
   * coalescing writer sends for it and for others waiting behind it count as its own, so what is in flight never
   * exceeds the cap. A statement issued in its context after that takes a slot of its own for its duration.
   */
  operation(): OperationSlot {
    let taking: Promise<void> | undefined
    let running = 0
    let ended = false
    let pendingDuration = 0
    const settle = () => {
      if (!ended || running > 0 || !taking) return
      const held = taking
      taking = undefined
      void held.then(() => this.release())
    }
    return {
      before: () => {
        running++
        taking ??= this.acquire().then((waited) => {
          pendingDuration = Math.round(waited)
        })
        return taking.then(() => () => {
          running--
          settle()
        })
      },
      end: () => {
        ended = true
        settle()
      },
      takePendingDuration: () => {
        const d = pendingDuration
        pendingDuration = 0
        return d
      },
    }
  }

  /** Resolves once a slot is taken, with how long it waited (ms). */
  private async acquire(): Promise<number> {
    if (this.inFlight < this.cap) {
      this.inFlight++
      return 0
    }
    const queuedAt = performance.now()
    const taken = new Promise<void>((resolve) => this.pending.push(resolve))
    this.onQueueSize(this.pending.length)
    await taken
    return performance.now() - queuedAt
  }

  /** The slot goes to the longest waiter, if any. */
  private release(): void {
    const next = this.pending.shift()
    if (!next) {
      this.inFlight--
      return
    }
    this.onQueueSize(this.pending.length)
    next()
  }
}
