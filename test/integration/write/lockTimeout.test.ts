// Issue #14: no client call waits forever on a lock. Pool sessions carry lock_timeout (default 10 s,
// pool.lockTimeoutMillis / DATAHUB_PGQUEUE_LOCK_TIMEOUT_MS): a send or a commit stuck behind a writer that holds the
// partition (here a DataHub-style open transaction) fails with a retriable error, and nothing is half-written.
import { describe, expect, it } from 'vitest'
import { KafkaJSError } from '../../../src/kafkajs/errors.js'
import { quoteIdent } from '../../../src/db/identifiers.js'
import { datahubLockKey } from '../../helpers/datahubWriter.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('write-lock-timeout', { pool: { lockTimeoutMillis: 300 } })
const q = (table: string) => `${quoteIdent(t.db.schema)}.${quoteIdent(`metadata_queue_${table}`)}`

describe('lock_timeout on the library sessions', () => {
  it('a send and a transaction commit blocked by a held partition fail with a retriable lock-timeout error, then work once it is free', async () => {
    const topic = await t.createTopic(1, 'held')
    const id = (await t.db.pool.query<{ id: string }>(`SELECT id::text FROM ${q('topic')} WHERE topic_name = $1`, [topic])).rows[0].id
    const plain = await t.producer({ retry: { retries: 0 } })
    // the advisory key has no schema in it: other files' writers of topic 1 may hold it for longer than 300 ms
    // too, so the sends around the held lock retry as an application's would
    const steady = await t.producer()
    const transactional = await t.producer({ transactionalId: uniqueName('held-tx') })
    await steady.send({ topic, messages: [{ value: 'before' }] })
    const holder = await t.db.connect()
    await holder.query('BEGIN')
    await holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [datahubLockKey(id, 0).toString()])

    const failure = await plain.send({ topic, messages: [{ value: 'blocked' }] }).catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(KafkaJSError)
    expect(String((failure as Error).message)).toMatch(/lock timeout/i)
    const tx = await transactional.transaction()
    await tx.send({ topic, messages: [{ value: 'tx-blocked' }] })
    const commitFailure = await tx.commit().catch((e: unknown) => e)
    expect(commitFailure).toBeInstanceOf(KafkaJSError)
    expect((commitFailure as KafkaJSError).retriable).toBe(true)

    await holder.query('COMMIT')
    await steady.send({ topic, messages: [{ value: 'after' }] })
    const { rows } = await t.db.pool.query<{ seq: string }>(`SELECT enqueue_seq::text AS seq FROM ${q('message')} WHERE topic_id = $1 ORDER BY 1`, [
      id,
    ])
    expect(rows.map((r) => r.seq)).toEqual(['1', '2'])
  })
})
