// Issue #14 item 4: an idempotent producer's retry that races its own first attempt. The first attempt waits for the
// partition's lock, its connection is cut (the server-side statement keeps waiting and later commits), the retry
// waits behind it: the duplicate check must run after the lock is held, or the retry writes the message again.
import { describe, expect, it } from 'vitest'
import { quoteIdent } from '../../../src/db/identifiers.js'
import { waitFor } from '../../helpers/db.js'
import { datahubLockKey } from '../../helpers/datahubWriter.js'
import { useTestKafka } from '../../helpers/kafka.js'
import { startCuttingProxy } from '../../helpers/tcpProxy.js'

const t = useTestKafka('write-idempotent-race')
const q = (table: string) => `${quoteIdent(t.db.schema)}.${quoteIdent(`metadata_queue_${table}`)}`

describe('idempotent retry racing its first attempt', () => {
  it('a retry that waited behind its cut first attempt is answered with that attempt offsets, not written twice', async () => {
    const topic = await t.createTopic(1, 'race')
    const id = (await t.db.pool.query<{ id: string }>(`SELECT id::text FROM ${q('topic')} WHERE topic_name = $1`, [topic])).rows[0].id
    const proxy = await startCuttingProxy(t.db.connectionString)
    const kafka = t.newKafka({ connectionString: proxy.connectionString })
    const producer = kafka.producer({ idempotent: true, retry: { initialRetryTime: 50, retries: 20 } })
    await producer.connect()
    try {
      await producer.send({ topic, messages: [{ key: 'warm-up', value: 'w', partition: 0 }] })
      // another writer holds the partition: its advisory lock (DataHub's protocol) and its ledger row
      const holder = await t.db.connect()
      await holder.query('BEGIN')
      await holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [datahubLockKey(id, 0).toString()])
      await holder.query(`UPDATE ${q('partition_seq')} SET next_seq = next_seq WHERE topic_id = $1 AND partition_id = 0`, [id])

      proxy.cutAfterNextRequest()
      const sent = producer.send({ topic, messages: [{ key: 'ONCE', value: 'o', partition: 0 }] })
      // the cut first attempt and the retry both wait for the holder
      await waitFor(async () => {
        const res = await t.db.pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()`,
          [t.db.schema],
        )
        return (res.rowCount ?? 0) >= 2
      })
      expect(proxy.cuts).toBe(1)
      await holder.query('COMMIT')
      const [meta] = await sent
      expect(meta.baseOffset).toBe('1')
    } finally {
      await producer.disconnect()
    }
    const { rows } = await t.db.pool.query<{ key: string; seq: string }>(
      `SELECT routing_key AS key, enqueue_seq::text AS seq FROM ${q('message')} WHERE topic_id = $1 ORDER BY enqueue_seq`,
      [id],
    )
    expect(rows.map((r) => `${r.seq}:${r.key}`)).toEqual(['1:warm-up', '2:ONCE'])
  })
})
