// Transaction control: the only BEGIN, COMMIT and ROLLBACK texts outside migrations/. Plain texts (not prepared):
// node-postgres sends them as simple queries. The caller holds the client (Database.checkout) and decides the
// boundaries; these only say them.
import type pg from 'pg'
import type { Database, Queryable } from '../db/database.js'
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
  let broken = false
  try {
    await begin(client)
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
