// plannedWithoutSorts: statements run through it are planned without sort paths and without JIT, and the settings
// end with its transaction: no pooled connection is left with them, whether fn succeeds or fails, and on a client
// a caller holds nothing is set at all.
import { describe, expect, it } from 'vitest'
import { plannedWithoutSorts } from '../../../src/store/transactions.js'
import { useTestSchema } from '../../helpers/db.js'

const db = useTestSchema('planned_without_sorts')

const settings = async (q: { query: (text: string) => Promise<{ rows: Array<Record<string, string>> }> }) =>
  (await q.query("SELECT current_setting('enable_sort') AS sort, current_setting('jit') AS jit")).rows[0]

describe('plannedWithoutSorts', () => {
  it('plans the statements of fn without sorts and JIT, in one transaction', async () => {
    const seen = await plannedWithoutSorts(db.pool, async (q) => {
      const s = await settings(q)
      const { rows } = await q.query<{ open: boolean }>('SELECT now() = statement_timestamp() AS open')
      return { ...s, inTransaction: !rows[0]!.open }
    })
    expect(seen).toEqual({ sort: 'off', jit: 'off', inTransaction: true })
    // the plan itself: ordering a function scan has no alternative to a sort, which now costs 1e10
    const plan = await plannedWithoutSorts(
      db.pool,
      async (q) => (await q.query('EXPLAIN SELECT g FROM generate_series(1, 3) g ORDER BY g DESC')).rows,
    )
    expect(JSON.stringify(plan)).toMatch(/cost=1000000/)
  })

  it('leaves every pooled connection as it was, after success and after failure', async () => {
    const max = 4
    await Promise.all(Array.from({ length: max }, () => plannedWithoutSorts(db.pool, (q) => q.query('SELECT pg_sleep(0.05)'))))
    await Promise.all(
      Array.from({ length: max }, () =>
        plannedWithoutSorts(db.pool, async (q) => {
          await q.query('SELECT 1/0')
        }).then(
          () => 'resolved',
          (e: Error) => e.message,
        ),
      ),
    ).then((outcomes) => expect(outcomes).toEqual(Array(max).fill('division by zero')))
    const clients = await Promise.all(Array.from({ length: max }, () => db.pool.connect()))
    try {
      for (const c of clients) {
        expect(await settings(c)).toEqual({ sort: 'on', jit: expect.any(String) })
        // not left inside a transaction: a statement of its own starts one
        expect((await c.query<{ fresh: boolean }>('SELECT now() = statement_timestamp() AS fresh')).rows[0]!.fresh).toBe(true)
      }
    } finally {
      for (const c of clients) c.release()
    }
  })

  it('a connection the server ends while fn holds it rejects fn, and does not crash the process', async () => {
    // failover.test.ts in CI: the primary killed while a commit held its client crashed the consumer with an
    // unhandled 'error' event ("Connection terminated unexpectedly") before the client was checked out quietly
    const other = await db.pool.connect()
    try {
      const outcome = await plannedWithoutSorts(db.pool, async (q) => {
        const { rows } = await q.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
        await other.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid])
        // the held client sees its socket close while no query runs: that is when it emits 'error'
        await new Promise((r) => setTimeout(r, 300))
        await q.query('SELECT 1')
      }).then(
        () => 'resolved',
        () => 'rejected',
      )
      expect(outcome).toBe('rejected')
    } finally {
      other.release()
    }
  })

  it('on a client inside a transaction its caller holds, sets nothing', async () => {
    const client = await db.pool.connect()
    try {
      await client.query('BEGIN')
      const seen = await plannedWithoutSorts(client, (q) => settings(q))
      expect(seen.sort).toBe('on')
      await client.query('ROLLBACK')
    } finally {
      client.release()
    }
  })
})
