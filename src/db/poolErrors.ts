// pg-pool's "timeout exceeded when trying to connect" says neither which pool, nor how big it is, nor what to change.
// The pool's connect() is wrapped so that error says all of it; the message keeps pg-pool's words first, so it is
// still classified as a (retriable) connection error, and the original stays as `cause`.
import type pg from 'pg'

const POOL_TIMEOUT = 'timeout exceeded when trying to connect'

export interface PoolDescription {
  /** e.g. `pgQueue pool of schema "queue"` */
  name: string
  max: number
  waitMs: number
}

/** The error to throw instead of pg-pool's bare timeout, or the error itself when it is another one. */
export function explainPoolError(err: unknown, pool: Pick<pg.Pool, 'totalCount' | 'idleCount' | 'waitingCount'>, d: PoolDescription): unknown {
  if (!(err instanceof Error) || !err.message.startsWith(POOL_TIMEOUT)) return err
  const exhausted = pool.totalCount >= d.max
  const what = exhausted
    ? `all ${d.max} connections of the ${d.name} were in use for ${d.waitMs} ms (${pool.waitingCount} other requests waiting). ` +
      'Raise DATAHUB_PGQUEUE_MAX_CONNECTIONS (pool.max) or DATAHUB_PGQUEUE_WAIT_TIMEOUT_MILLIS (pool.connectionTimeoutMillis), ' +
      'or spread consumers and producers over more Kafka clients: each running consumer holds connections while it fetches'
    : `the ${d.name} (${pool.totalCount} of ${d.max} connections open) could not open a new connection within ${d.waitMs} ms: ` +
      'the server is slow or unreachable; DATAHUB_PGQUEUE_WAIT_TIMEOUT_MILLIS (pool.connectionTimeoutMillis) sets the wait'
  return Object.assign(new Error(`${POOL_TIMEOUT}: ${what}`, { cause: err }), { pool: { ...d, total: pool.totalCount, waiting: pool.waitingCount } })
}

/** Makes every connect() of the pool (pool.query's included) fail with explainPoolError's message. */
export function describePoolTimeouts(pool: pg.Pool, d: PoolDescription): void {
  const connect = pool.connect.bind(pool) as (
    cb?: (err: Error | undefined, client?: pg.PoolClient, done?: (release?: unknown) => void) => void,
  ) => Promise<pg.PoolClient> | void
  const explain = (err: unknown) => explainPoolError(err, pool, d)
  pool.connect = ((cb?: (err: Error | undefined, client?: pg.PoolClient, done?: (release?: unknown) => void) => void) => {
    if (cb) return connect((err, client, done) => cb(err ? (explain(err) as Error) : err, client, done))
    return (connect() as Promise<pg.PoolClient>).catch((err: unknown) => Promise.reject(explain(err)))
  }) as typeof pool.connect
}
