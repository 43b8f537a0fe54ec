// Issue #14 item 3: a partition with no ledger row (its count raised by DataHub's clients, before the seeding
// trigger existed) is seeded inside the writer's own transaction. It used to be seeded on another pooled connection
// that waited on a row the send's own transaction held: a hang PostgreSQL cannot detect.
import { describe, expect, it } from 'vitest'
import { quoteIdent } from '../../../src/db/identifiers.js'
import { bounded } from '../../helpers/db.js'
import { datahubWriter } from '../../helpers/datahubWriter.js'
import { useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('write-seeding')
const q = (table: string) => `${quoteIdent(t.db.schema)}.${quoteIdent(`metadata_queue_${table}`)}`

describe('ledger seeding inside the send', () => {
  it('multi-partition plain, transactional and outbox sends to partitions without ledger rows complete at once, above the stored rows', async () => {
    const topic = await t.createTopic(2, 'grown')
    const id = (await t.db.pool.query<{ id: string }>(`SELECT id::text FROM ${q('topic')} WHERE topic_name = $1`, [topic])).rows[0].id
    // DataHub raises the count and writes to a new partition; then the ledger rows are gone, as on a schema where
    // that happened before the seeding trigger existed
    const writer = datahubWriter(await t.db.connect(), t.db.schema)
    await writer.ensureTopic(topic, 8)
    await writer.enqueue(id, 7, 'dh', Buffer.from('dh'))
    await writer.enqueue(id, 7, 'dh', Buffer.from('dh'))
    await t.db.pool.query(`DELETE FROM ${q('partition_seq')} WHERE topic_id = $1 AND partition_id >= 2`, [id])

    const kafka = t.newKafka() // a fresh topic cache that sees 8 partitions
    const producer = kafka.producer({ transactionalId: `seeding-${id}` })
    await producer.connect()
    try {
      const started = performance.now()
      const batch = await bounded(
        'sendBatch',
        producer.sendBatch({ topicMessages: [{ topic, messages: [0, 2, 3].map((partition) => ({ value: 'b', partition })) }] }),
      )
      const tx = await producer.transaction()
      await tx.send({ topic, messages: [4, 0, 7].map((partition) => ({ value: 't', partition })) })
      await bounded('transaction commit', tx.commit())
      const client = await t.db.connect()
      await client.query('BEGIN')
      await bounded('sendWith', producer.sendWith(client, { topic, messages: [5, 1, 6].map((partition) => ({ value: 'o', partition })) }))
      await bounded('outbox commit', client.query('COMMIT'))
      console.log(`seeding: three multi-partition writes to unseeded partitions took ${Math.round(performance.now() - started)} ms`)
      expect(batch.map((m) => [m.partition, m.baseOffset])).toEqual([
        [0, '0'],
        [2, '0'],
        [3, '0'],
      ])
    } finally {
      await producer.disconnect()
    }
    const { rows } = await t.db.pool.query<{ partition: number; seqs: string[]; next: string }>(
      `SELECT s.partition_id AS partition, s.next_seq::text AS next,
              ARRAY(SELECT m.enqueue_seq::text FROM ${q('message')} m
                    WHERE m.topic_id = s.topic_id AND m.partition_id = s.partition_id ORDER BY 1) AS seqs
       FROM ${q('partition_seq')} s WHERE s.topic_id = $1 ORDER BY 1`,
      [id],
    )
    expect(rows).toEqual([
      { partition: 0, next: '3', seqs: ['1', '2'] },
      { partition: 1, next: '2', seqs: ['1'] },
      { partition: 2, next: '2', seqs: ['1'] },
      { partition: 3, next: '2', seqs: ['1'] },
      { partition: 4, next: '2', seqs: ['1'] },
      { partition: 5, next: '2', seqs: ['1'] },
      { partition: 6, next: '2', seqs: ['1'] },
      { partition: 7, next: '4', seqs: ['1', '2', '3'] }, // seeded past DataHub's two rows
    ])
  })
})
