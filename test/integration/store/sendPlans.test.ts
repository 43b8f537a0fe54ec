// A send's server time at small batch sizes was mostly planning: its prepared statement stayed on custom plans (the
// allocation function's default estimate of 1,000 rows made the generic plan look dearer) and the sql functions it
// calls (lock key, logStartOffset) were parsed and planned again in every transaction. Both kept out here.
import { expect, it } from 'vitest'
import { tablesFor } from '../../../src/db/tables.js'
import { enqueuePartition, type StoredMessage } from '../../../src/store/enqueue.js'
import { useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('send_plans')

const message = (i: number): StoredMessage => ({
  routingKey: `k${i}`,
  messageKey: null,
  flags: 0,
  priority: 5,
  payload: Buffer.from(`v${i}`),
  compression: 0,
  headers: null,
  timestamp: null,
})

it('a one-message send runs on the generic plan of its prepared statement once the plan cache has decided', async () => {
  const topic = await t.createTopic(1, 'plans')
  const id = (await t.db.pool.query<{ id: string }>(`SELECT id FROM ${t.db.schema}.metadata_queue_topic WHERE topic_name = $1`, [topic])).rows[0].id
  const client = await t.db.connect()
  try {
    const tables = tablesFor(t.db.schema, 'metadata_queue')
    for (let i = 0; i < 12; i++) await enqueuePartition(client, tables, id, 0, [message(i)])
    const plans = await client.query<{ generic: string; custom: string }>(
      `SELECT generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements WHERE name LIKE 'pgq_enqueue_enqueue_%'`,
    )
    expect(plans.rows).toHaveLength(1)
    // PostgreSQL plans the first five executions for their values, then keeps the generic plan if it is not dearer
    expect(Number(plans.rows[0].custom)).toBeLessThanOrEqual(5)
    expect(Number(plans.rows[0].generic)).toBeGreaterThanOrEqual(7)
  } finally {
    await client.end()
  }
})

it('the functions every send runs are plpgsql, whose plans last the session, not sql ones planned per transaction', async () => {
  await t.createTopic(1, 'languages')
  const fns = ['lock_key', 'lock_partition', 'take_seq', 'allocate_seq', 'maintenance_next_seq_after', 'maintenance_max_seq']
  const langs = await t.db.pool.query<{ proname: string; lanname: string }>(
    `SELECT p.proname, l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
     WHERE p.pronamespace = $1::regnamespace AND p.proname = ANY($2::text[])`,
    [t.db.schema, fns.map((f) => `metadata_queue_${f}`)],
  )
  expect(Object.fromEntries(langs.rows.map((r) => [r.proname, r.lanname]))).toEqual(
    Object.fromEntries(fns.map((f) => [`metadata_queue_${f}`, 'plpgsql'])),
  )
})
