import pg from 'pg'
import { observed } from './roundTrips.js'
import type { Tables } from './tables.js'

/** A statement with a stable name, so node-postgres prepares it once per connection. */
export interface Statement {
  name: string
  text: string
}

export type Queryable = Pick<pg.ClientBase, 'query'>

/**
 * The pool plus the table names of one schema + prefix. Every store function takes a `Queryable`
 * (the pool, or a client inside a transaction) so callers decide the transaction boundaries.
 */
export class Database {
  constructor(
    readonly pool: pg.Pool,
    readonly tables: Tables,
    /** a client held longer than this (ms, 0 = never) is reported through onLeak */
    private readonly leakAfterMs = 0,
    private readonly onLeak: (heldMs: number) => void = () => undefined,
  ) {}

  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(stmt: Statement, values: unknown[] = []) {
    return run<R>(this.pool, stmt, values)
  }

  /**
   * A pooled client held across awaits. While it is checked out the pool does not listen for its errors, and an
   * 'error' nobody listens to (the server terminated the backend) would crash the process: swallow it here; the
   * next query on the client fails and the caller handles that.
   */
  async checkout(): Promise<pg.PoolClient> {
    const client = await checkoutQuietly(this.pool)
    const since = Date.now()
    const leak = this.leakAfterMs > 0 ? setTimeout(() => this.onLeak(Date.now() - since), this.leakAfterMs).unref() : undefined
    const release = client.release.bind(client)
    client.release = (err?: Error | boolean) => {
      clearTimeout(leak)
      client.release = release
      return release(err)
    }
    return client
  }
}

/** A pooled client held across awaits, its 'error' events swallowed until it is released (see Database.checkout). */
export async function checkoutQuietly(pool: pg.Pool): Promise<pg.PoolClient> {
  const client = await pool.connect()
  const ignore = () => undefined
  client.on('error', ignore)
  const release = client.release.bind(client)
  client.release = (err?: Error | boolean) => {
    client.removeListener('error', ignore)
    client.release = release
    return release(err)
  }
  return client
}

export async function run<R extends pg.QueryResultRow = pg.QueryResultRow>(
  db: Queryable,
  stmt: Statement,
  values: unknown[] = [],
): Promise<pg.QueryResult<R>> {
  return observed(db, stmt.text, values, () => db.query<R>({ name: stmt.name, text: stmt.text, values }))
}
