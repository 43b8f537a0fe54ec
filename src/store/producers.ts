import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

const sql = statements('producers', (t) => ({
  // A producer starting with a transactional id takes the next epoch, fencing older holders of the id. Returns the
  // backend that was running the previous holder's open transaction, if any.
  bumpEpoch: `
    WITH old AS (
      SELECT txn_backend_pid AS pid, txn_started_at AS since FROM ${t.transactionalProducer}
      WHERE transactional_id = $1 FOR UPDATE
    ), bump AS (
      INSERT INTO ${t.transactionalProducer} AS tp (transactional_id) VALUES ($1)
      ON CONFLICT (transactional_id) DO UPDATE
        SET producer_epoch = tp.producer_epoch + 1, txn_backend_pid = NULL, txn_started_at = NULL, updated_at = now()
      RETURNING producer_epoch
    )
    SELECT (SELECT producer_epoch FROM bump)::text AS epoch, old.pid, old.since
    FROM (SELECT 1) one LEFT JOIN old ON true`,
  // Ends that transaction as Kafka aborts a zombie's, so its row locks cannot stall the successor; only if the
  // backend is still inside the transaction it registered (never a pooled connection that has moved on).
  // The pid is a parameter, so nothing but that one backend can ever be signalled.
  abortOld: `
    SELECT pg_terminate_backend($1::int) AS aborted
    FROM pg_stat_activity WHERE pid = $1::int AND pid <> pg_backend_pid() AND xact_start >= $2::timestamptz`,
  // Before BEGIN, outside the transaction: which backend runs this epoch's transaction.
  register: `
    UPDATE ${t.transactionalProducer}
    SET txn_backend_pid = pg_backend_pid(), txn_started_at = clock_timestamp()
    WHERE transactional_id = $1 AND producer_epoch = $2`,
  // Inside the transaction, just before COMMIT. Its row lock is held until COMMIT, so a concurrent epoch bump waits
  // for this transaction: a zombie either commits before it is fenced or is refused.
  checkEpoch: `
    UPDATE ${t.transactionalProducer} SET updated_at = now(), txn_backend_pid = NULL, txn_started_at = NULL
    WHERE transactional_id = $1 AND producer_epoch = $2`,
  current: `SELECT producer_epoch::text AS epoch FROM ${t.transactionalProducer} WHERE transactional_id = $1`,
  // After a COMMIT whose answer was lost: if the transaction's backend is still inside it, end it and wait (up to
  // $3 ms) until it is gone, so the outcome is final before it is read.
  endLostTxn: `
    SELECT pg_terminate_backend(a.pid, $3::int8) AS ended
    FROM pg_stat_activity a JOIN ${t.transactionalProducer} tp ON a.pid = tp.txn_backend_pid
    WHERE tp.transactional_id = $1 AND tp.producer_epoch = $2 AND a.pid <> pg_backend_pid() AND a.xact_start >= tp.txn_started_at`,
  // checkEpoch cleared txn_backend_pid inside the transaction: only a committed one shows it cleared
  lostTxnCommitted: `
    SELECT txn_backend_pid IS NULL AS committed FROM ${t.transactionalProducer}
    WHERE transactional_id = $1 AND producer_epoch = $2`,
  // Inside the transaction, for it alone (is_local): the server ends it once it sat idle this long (ms).
  limitIdle: `SELECT set_config('idle_in_transaction_session_timeout', $1, true)`,
}))

/**
 * KafkaJS's transactionTimeout: Kafka's coordinator aborts a transaction left open longer, so a stalled producer
 * cannot hold back the consumers waiting on its offsets. Here the server ends a transaction that sat idle that long
 * (its row locks stall the next owner of a partition whose offsets it wrote).
 */
export async function limitTransactionIdle(db: Queryable, t: Tables, timeoutMs: number): Promise<void> {
  await run(db, sql(t).limitIdle, [String(Math.max(0, Math.round(timeoutMs)))])
}

/** Takes the next epoch of a transactional id; returns it and whether an older holder's transaction was aborted. */
export async function bumpProducerEpoch(db: Queryable, t: Tables, transactionalId: string): Promise<{ epoch: string; aborted: boolean }> {
  const { epoch, pid, since } = (await run<{ epoch: string; pid: number | null; since: Date | null }>(db, sql(t).bumpEpoch, [transactionalId]))
    .rows[0]
  if (pid === null || since === null) return { epoch, aborted: false }
  const res = await run<{ aborted: boolean }>(db, sql(t).abortOld, [pid, since])
  return { epoch, aborted: res.rows[0]?.aborted === true }
}

export async function registerTransaction(db: Queryable, t: Tables, transactionalId: string, epoch: string): Promise<void> {
  await run(db, sql(t).register, [transactionalId, epoch])
}

/** True when `epoch` is still the current epoch of the transactional id (locks the row until commit). */
export async function holdsEpoch(db: Queryable, t: Tables, transactionalId: string, epoch: string): Promise<boolean> {
  return ((await run(db, sql(t).checkEpoch, [transactionalId, epoch])).rowCount ?? 0) === 1
}

export async function currentEpoch(db: Queryable, t: Tables, transactionalId: string): Promise<string | null> {
  return (await run<{ epoch: string }>(db, sql(t).current, [transactionalId])).rows[0]?.epoch ?? null
}

/**
 * The outcome of a transaction whose COMMIT answer was lost (the connection broke at COMMIT): the server may have
 * committed it or not. Read once its backend is surely gone; 'unknown' when the epoch moved on meanwhile.
 */
export async function settleLostCommit(
  db: Queryable,
  t: Tables,
  transactionalId: string,
  epoch: string,
): Promise<'committed' | 'rolled back' | 'unknown'> {
  await run(db, sql(t).endLostTxn, [transactionalId, epoch, 10_000])
  const row = (await run<{ committed: boolean }>(db, sql(t).lostTxnCommitted, [transactionalId, epoch])).rows[0]
  return row === undefined ? 'unknown' : row.committed ? 'committed' : 'rolled back'
}
