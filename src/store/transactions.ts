// Transaction control: the only BEGIN, COMMIT and ROLLBACK texts outside migrations/. Plain texts (not prepared):
// node-postgres sends them as simple queries. The caller holds the client (Database.checkout) and decides the
// boundaries; these only say them.
import pg from 'pg'
import { checkoutQuietly, type Database, type Queryable } from '../db/database.js'
import { observed } from '../db/roundTrips.js'

/**
 * READ COMMITTED whatever the server's default_transaction_isolation: sequence allocation must see what committed
 * before it took its lock, and offsets assigned at COMMIT cannot be under a REPEATABLE READ or SERIALIZABLE
 * snapshot. 'server default' leaves the isolation to the server (the migrator, a dry run).
 */
export async function begin(client: Queryable, isolation: 'read committed' | 'server default' = 'read committed'): Promise<void> {
  await client.query(isolation === 'read committed' ? 'BEGIN ISOLATION LEVEL READ COMMITTED' : 'BEGIN')
}

export async function commit(client: Queryable): Promise<void> {
  await client.query('COMMIT')
}

export async function rollback(client: Queryable): Promise<void> {
  await client.query('ROLLBACK')
}

/** COMMIT (or ROLLBACK), reported to the round-trip observer of the calling context like any store statement. */
export async function endTransaction(client: Queryable, outcome: 'commit' | 'rollback'): Promise<void> {
  const verb = outcome === 'commit' ? 'COMMIT' : 'ROLLBACK'
  await observed(client, verb, [], () => client.query(verb))
}

/** Runs fn inside BEGIN (READ COMMITTED) / COMMIT on one pooled client; ROLLBACK on error. */
export async function transaction<T>(db: Database, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.checkout()
  return committed(client, () => begin(client), fn)
}

/** opens a transaction on a checked-out client, runs fn, COMMITs (ROLLBACK on error) and releases the client */
async function committed<T>(client: pg.PoolClient, open: () => Promise<unknown>, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  let broken = false
  try {
    await open()
    const result = await fn(client)
    await commit(client)
    return result
  } catch (err) {
    try {
      await rollback(client)
    } catch {
      broken = true // the connection is gone; do not return it to the pool
    }
    throw err
  } finally {
    client.release(broken || undefined)
  }
}

/** Runs fn in a transaction that is always rolled back: a statement's exact effect, without keeping it. */
export async function rolledBack<T>(db: Database, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.checkout()
  let broken = false
  try {
    await begin(client, 'server default')
    return await fn(client)
  } finally {
    await rollback(client).catch(() => (broken = true))
    client.release(broken || undefined)
  }
}

/**
 * Runs fn in a transaction planned without sort paths when db is a pool (one simple query: BEGIN, then SET LOCAL
 * enable_sort and jit off, so the settings end with it); on a client, in a transaction its caller holds, fn runs as
 * it is. For a probe of the next row above a position, `ORDER BY priority, seq LIMIT n` over the time partitions:
 * with statistics taken before the topic's rows the planner rated the band at a row or two and read the whole band
 * above the position to sort it, instead of merging the dequeue index and stopping at the first row (a
 * 200,000-row backlog drained at 37,000 msg/s instead of 115,000). jit off: a sort left without an alternative
 * would cost 1e10 and JIT-compile the statement.
 */
export async function plannedWithoutSorts<T>(db: Queryable, fn: (client: Queryable) => Promise<T>): Promise<T> {
  if (!(db instanceof pg.Pool)) return fn(db)
  const client = await checkoutQuietly(db)
  const opening = `BEGIN; ${WITHOUT_SORT_PLANS}`
  return committed(client, () => observed(client, opening, [], () => client.query(opening)), fn)
}

/** SET LOCAL texts for a statement that must be planned without sort paths (plannedWithoutSorts, the bulk fetch) */
export const WITHOUT_SORT_PLANS = 'SET LOCAL enable_sort = off; SET LOCAL jit = off'
