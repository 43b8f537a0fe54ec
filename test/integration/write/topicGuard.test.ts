// V033 / R__topic_guard.sql: the message table's topic foreign key is gone (its per-row check was a third of an
// insert), and what it guaranteed still holds: other clients' rows must name an existing topic (SQLSTATE 23503, the
// foreign key's constraint name), a topic delete deletes its messages, and a delete racing a send of ours that holds
// the partition's ledger row waits for it and deletes its rows too: no message outlives its topic.
import { describe, expect, it } from 'vitest'
import { quoteIdent } from '../../../src/db/identifiers.js'
import { datahubWriter } from '../../helpers/datahubWriter.js'
import { useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('write-topic-guard')
const table = (name: string) => `${quoteIdent(t.db.schema)}.${quoteIdent(`metadata_queue_${name}`)}`

async function topicId(name: string): Promise<string> {
  const res = await t.db.pool.query<{ id: string }>(`SELECT id::text FROM ${table('topic')} WHERE topic_name = $1`, [name])
  return res.rows[0]!.id
}

const count = async (id: string) =>
  Number((await t.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table('message')} WHERE topic_id = $1`, [id])).rows[0]!.n)

describe('topic guard without the per-row foreign key', () => {
  it('no foreign key from message to topic is left (the check the inserts paid for)', async () => {
    await t.createTopic(1) // migrates the schema
    const res = await t.db.pool.query(
      `SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass AND confrelid = $2::regclass AND contype = 'f'`,
      [table('message'), table('topic')],
    )
    expect(res.rows).toEqual([])
  })

  it("a DataHub client's row for a topic that does not exist fails as the foreign key did", async () => {
    await t.createTopic(1)
    const client = await t.db.connect()
    const writer = datahubWriter(client, t.db.schema)
    const error = await writer.enqueue('987654321', 0, 'k', Buffer.from('v')).catch((e: unknown) => e)
    // the ledger trigger (DataHub rows move the ledger) or the topic check, whichever fires first: a foreign key's error
    expect(error).toMatchObject({ code: '23503', constraint: expect.stringMatching(/^metadata_queue_(message|partition_seq)_topic_id_fkey$/) })
  })

  it("a DataHub client's row for an existing topic goes in", async () => {
    const topic = await t.createTopic(1)
    const client = await t.db.connect()
    const writer = datahubWriter(client, t.db.schema)
    const id = await topicId(topic)
    await writer.enqueue(id, 0, 'k', Buffer.from('v'))
    expect(await count(id)).toBe(1)
  })

  it('deleting a topic deletes its messages (ours and DataHub rows)', async () => {
    const topic = await t.createTopic(2)
    const id = await topicId(topic)
    const producer = await t.producer()
    await producer.send({
      topic,
      messages: [
        { value: 'a', partition: 0 },
        { value: 'b', partition: 1 },
      ],
    })
    const client = await t.db.connect()
    await datahubWriter(client, t.db.schema).enqueue(id, 1, 'k', Buffer.from('c'))
    expect(await count(id)).toBe(3)
    await t.db.pool.query(`DELETE FROM ${table('topic')} WHERE id = $1`, [id])
    expect(await count(id)).toBe(0)
  })

  it("a topic delete that starts while a send of ours is uncommitted waits for it and deletes the send's rows", async () => {
    const topic = await t.createTopic(1)
    const id = await topicId(topic)
    const writer = await t.db.connect()
    // a send in progress: its statement ran (ledger row updated and locked, rows inserted), COMMIT not yet
    await writer.query('BEGIN')
    await writer.query(`UPDATE ${table('partition_seq')} SET next_seq = next_seq + 1 WHERE topic_id = $1 AND partition_id = 0`, [id])
    await writer.query(
      `INSERT INTO ${table('message')} (topic_id, partition_id, routing_key, enqueue_seq, payload, kafka_flags)
       SELECT $1, 0, '', next_seq - 1, '\\x01', 4 FROM ${table('partition_seq')} WHERE topic_id = $1 AND partition_id = 0`,
      [id],
    )
    const deleter = await t.db.connect()
    let deleted = false
    const deleting = deleter.query(`DELETE FROM ${table('topic')} WHERE id = $1`, [id]).then(() => (deleted = true))
    await new Promise((r) => setTimeout(r, 300))
    expect(deleted).toBe(false) // waiting for the writer's ledger row
    await writer.query('COMMIT')
    await deleting
    expect(await count(id)).toBe(0)
  })

  it('a send to a topic deleted meanwhile fails as a deleted topic (not a message foreign key), and writes nothing', async () => {
    const topic = await t.createTopic(1)
    const id = await topicId(topic)
    const producer = await t.producer({ retry: { retries: 0 } })
    await producer.send({ topic, messages: [{ value: 'cached' }] }) // caches the topic row
    await t.db.pool.query(`DELETE FROM ${table('topic')} WHERE id = $1`, [id])
    await expect(producer.send({ topic, messages: [{ value: 'late' }] })).rejects.toThrow()
    expect(await count(id)).toBe(0)
  })
})
