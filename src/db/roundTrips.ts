import { AsyncLocalStorage } from 'node:async_hooks'
import pg from 'pg'

/** One statement sent to PostgreSQL, as seen by whoever asked to observe the calls it makes. */
export interface RoundTrip {
  text: string
  values: readonly unknown[]
  /** ms since the epoch when the statement was issued */
  startedAt: number
  durationMs: number
  /** callers already waiting for a pooled connection when this one was issued (0 on a held client) */
  waiting: number
  error?: unknown
}

/** Whoever asked to observe the statements of a piece of work: may hold each one back, and hears how it went. */
export interface RoundTripObserver {
  /** before each statement is issued: the statement waits for the promise, and calls what it resolves to when done */
  before?: () => Promise<() => void>
  after?: (trip: RoundTrip) => void
}

const observers = new AsyncLocalStorage<RoundTripObserver>()

/** Runs fn with every statement it issues (through `observed`) reported to `observer`. */
export function observeRoundTrips<T>(observer: RoundTripObserver, fn: () => Promise<T>): Promise<T> {
  return observers.run(observer, fn)
}

/** Issues one statement, reporting it to the observer of the calling context, if any. */
export async function observed<T>(db: unknown, text: string, values: readonly unknown[], query: () => Promise<T>): Promise<T> {
  const observer = observers.getStore()
  if (!observer) return query()
  const done = await observer.before?.()
  try {
    const after = observer.after
    if (!after) return await query()
    // a full pool hands its idle clients to earlier waiters first (asynchronously): this call queues behind those
    const waiting =
      db instanceof pg.Pool && db.totalCount >= (db.options.max ?? 10) && db.waitingCount >= db.idleCount ? db.waitingCount - db.idleCount + 1 : 0
    const startedAt = Date.now()
    try {
      const result = await query()
      after({ text, values, startedAt, durationMs: Date.now() - startedAt, waiting })
      return result
    } catch (error) {
      after({ text, values, startedAt, durationMs: Date.now() - startedAt, waiting, error })
      throw error
    }
  } finally {
    done?.()
  }
}

/** host:port the pool connects to (resolved as node-postgres does, PG* variables included), never credentials. */
export function endpointOf(pool: pg.Pool): string {
  const { host, port } = new pg.Client(pool.options)
  return `${host}:${port}`
}
