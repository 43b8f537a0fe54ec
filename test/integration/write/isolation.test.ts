// Issue #14 item 2: sequence allocation happens at COMMIT, from state other writers change meanwhile. READ COMMITTED
// callers see it; a REPEATABLE READ or SERIALIZABLE snapshot cannot (its commit failed with 40001 whenever another
// send hit the partition, taking the caller's own rows down with it). Such sends were refused until issue #34 item 3;
// they are now staged and numbered after their COMMIT (outboxIsolation.test.ts). Our own transactions are READ
// COMMITTED whatever the server default.
import { describe, expect, it } from 'vitest'
import { quoteIdent } from '../../../src/db/identifiers.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('write-isolation')
const q = (table: string) => `${quoteIdent(t.db.schema)}.${quoteIdent(`metadata_queue_${table}`)}`

async function seqs(topic: string): Promise<number[]> {
  const { rows } = await t.db.pool.query<{ seq: string }>(
    `SELECT m.enqueue_seq::text AS seq FROM ${q('message')} m JOIN ${q('topic')} t ON t.id = m.topic_id
     WHERE t.topic_name = $1 ORDER BY m.enqueue_seq`,
    [topic],
  )
  return rows.map((r) => Number(r.seq))
}

describe('outbox sends and the caller isolation level', () => {
  it('READ COMMITTED: a sendWith whose partition other producers write meanwhile commits, with its business row', async () => {
    const topic = await t.createTopic(1, 'rc')
    const producer = await t.producer()
    const client = await t.db.connect()
    await client.query(`CREATE TABLE IF NOT EXISTS ${quoteIdent(t.db.schema)}.orders (id text PRIMARY KEY)`)
    const order = uniqueName('order')
    await client.query('BEGIN ISOLATION LEVEL READ COMMITTED')
    await client.query(`INSERT INTO ${quoteIdent(t.db.schema)}.orders VALUES ($1)`, [order])
    await producer.sendWith(client, { topic, messages: [{ value: 'outbox' }] })
    for (let i = 0; i < 5; i++) await producer.send({ topic, messages: [{ value: `plain-${i}` }] })
    await client.query('COMMIT')
    expect((await client.query(`SELECT 1 FROM ${quoteIdent(t.db.schema)}.orders WHERE id = $1`, [order])).rowCount).toBe(1)
    expect(await seqs(topic)).toEqual([1, 2, 3, 4, 5, 6])
  })

  it('producer transactions stay READ COMMITTED when the server default is SERIALIZABLE', async () => {
    const url = new URL(t.db.connectionString)
    url.searchParams.set('options', '-c default_transaction_isolation=serializable')
    const kafka = t.newKafka({ connectionString: url.toString() })
    const topic = await t.createTopic(1, 'default-ser')
    const tx = kafka.producer({ transactionalId: uniqueName('ser') })
    const plain = kafka.producer()
    await tx.connect()
    await plain.connect()
    try {
      const open = await tx.transaction()
      await open.send({ topic, messages: [{ value: 'in-tx' }] })
      await plain.sendBatch({ topicMessages: [{ topic, messages: [{ value: 'plain-1' }] }] })
      await plain.send({ topic, messages: [{ value: 'plain-2' }] })
      await open.commit()
    } finally {
      await tx.disconnect()
      await plain.disconnect()
    }
    expect(await seqs(topic)).toEqual([1, 2, 3])
  })
})
