// Fetch and commit read only the time partitions that can hold the rows they look for (issue 36,
// docs/decisions/scale-011-read-horizon.md). These cases are the ways a time bound could skip a row: a transaction
// that commits late with an old enqueued_at, a seek back into an old time partition, partitions dropped by retention,
// and priorities. The range a statement reads is widened by readSlack and rounded down to a partition start; the
// late-commit cases narrow both (1 s, no rounding) so that a bound that ignored the open transaction would skip the
// row, and a control case shows it does.
import type { Consumer, KafkaMessage } from 'kafkajs'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readSlack } from '../../../src/consumer/readFloors.js'
import { quoteIdent } from '../../../src/db/identifiers.js'
import { datahubLockKey } from '../../helpers/datahubWriter.js'
import { waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('read_floors')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// the schema (and its functions) is made by the first client that connects
beforeAll(async () => {
  await t.createTopic(1)
})

const q = (name: string) => `${quoteIdent(t.db.schema)}.${quoteIdent(`metadata_queue_${name}`)}`

async function topicId(topic: string): Promise<string> {
  const { rows } = await t.db.pool.query<{ id: string }>(`SELECT id::text FROM ${q('topic')} WHERE topic_name = $1`, [topic])
  return rows[0]!.id
}

/** Collects what a member receives, by value. */
async function collect(consumer: Consumer, topic: string) {
  const got: Array<{ value: string; partition: number; offset: string; priority?: unknown }> = []
  await consumer.subscribe({ topic, fromBeginning: true })
  await consumer.run({
    eachMessage: async ({ message, partition }: { message: KafkaMessage; partition: number }) => {
      got.push({ value: message.value!.toString(), partition, offset: message.offset })
    },
  })
  return got
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (check()) return true
    await sleep(50)
  }
  return check()
}

/** A DataHub-style insert (advisory lock, MAX + 1) on `client`, inside whatever transaction it has open. */
async function datahubInsert(client: pg.ClientBase, topic: string, partition: number, value: string, enqueuedAt?: string): Promise<void> {
  const id = await topicId(topic)
  await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [datahubLockKey(id, partition).toString()])
  await client.query(
    `WITH mx AS (SELECT COALESCE(MAX(enqueue_seq), 0) AS max_seq FROM ${q('message')} WHERE topic_id = $1 AND partition_id = $2)
     INSERT INTO ${q('message')} (topic_id, partition_id, routing_key, enqueue_seq, priority, payload, enqueued_at)
     SELECT $1, $2, $3, mx.max_seq + 1, 5, convert_to($3, 'UTF8'), COALESCE($4::timestamptz, now()) FROM mx`,
    [id, partition, value, enqueuedAt ?? null],
  )
}

describe('read horizon', () => {
  it("holds lo at an open transaction's start until it ends, which is the enqueued_at its rows get", async () => {
    const writer = await t.db.connect()
    await writer.query('BEGIN')
    const { rows } = await writer.query<{ start: Date; micros: string }>(
      `SELECT now() AS start, (extract(epoch FROM now()) * 1000000)::int8::text AS micros`,
    )
    await sleep(300)
    const read = async () =>
      (await t.db.pool.query<{ lo: string | null }>(`SELECT (extract(epoch FROM lo) * 1000000)::int8::text AS lo FROM ${q('read_horizon')}()`))
        .rows[0]!.lo
    // the horizon is database-wide: other sessions' open transactions (other test files) can only hold it lower
    expect(BigInt((await read())!)).toBeLessThanOrEqual(BigInt(rows[0]!.micros))
    await writer.query('COMMIT')
    await waitFor(async () => BigInt((await read())!) > BigInt(rows[0]!.micros), { what: 'the horizon to pass the ended transaction' })
  })
})

describe('late commits', () => {
  const realFloor = `SELECT p_at`
  let original: string

  beforeAll(async () => {
    original = (
      await t.db.pool.query<{ def: string }>(`SELECT pg_get_functiondef(to_regprocedure($1)) AS def`, [
        `${t.db.schema}.metadata_queue_partition_floor(timestamptz)`,
      ])
    ).rows[0]!.def
    // the tightest bounds: 1 s of slack, no rounding down to a partition start
    readSlack.us = 1_000_000n
    await t.db.pool.query(
      `CREATE OR REPLACE FUNCTION ${q('partition_floor')}(p_at timestamptz) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS '${realFloor}'`,
    )
  })
  afterAll(async () => {
    readSlack.us = 300_000_000n
    await t.db.pool.query(original)
  })

  /**
   * A member reads partition 1 while a transaction that began seconds ago writes a row to partition 0 and commits
   * after the member's floors have moved past that row's enqueued_at (the transaction's start). True if delivered.
   */
  async function lateCommit(): Promise<{ delivered: boolean; others: number }> {
    const topic = await t.createTopic(2)
    const producer = await t.producer()
    const consumer = await t.consumer({ groupId: uniqueName('late'), maxWaitTimeInMs: 200 })
    const got = await collect(consumer, topic)
    await producer.send({ topic, messages: [{ value: 'first', partition: 1 }] })
    expect(await until(() => got.length === 1, 10_000)).toBe(true)
    const writer = await t.db.connect()
    await writer.query('BEGIN')
    await writer.query('SELECT now()')
    // the member keeps fetching (and draining) for 3 s: its floors are renewed from the read horizon meanwhile
    for (let i = 0; i < 15; i++) {
      await producer.send({ topic, messages: [{ value: `other-${i}`, partition: 1 }] })
      await sleep(200)
    }
    await datahubInsert(writer, topic, 0, 'late')
    await writer.query('COMMIT')
    await producer.send({ topic, messages: [{ value: 'after', partition: 1 }] })
    await until(() => got.filter((g) => g.partition === 1).length === 17, 10_000)
    const delivered = await until(() => got.some((g) => g.value === 'late'), 5000)
    await consumer.disconnect()
    return { delivered, others: got.filter((g) => g.partition === 1).length }
  }

  it('delivers a row committed late with an enqueued_at older than every fetch since', async () => {
    const r = await lateCommit()
    expect(r.others).toBe(17)
    expect(r.delivered).toBe(true)
  })

  it('control: with a horizon blind to open transactions the same row is skipped (the case above can fail)', async () => {
    const def = (
      await t.db.pool.query<{ def: string }>(`SELECT pg_get_functiondef(to_regprocedure($1)) AS def`, [
        `${t.db.schema}.metadata_queue_read_horizon()`,
      ])
    ).rows[0]!.def
    await t.db.pool.query(
      `CREATE OR REPLACE FUNCTION ${q('read_horizon')}(OUT lo timestamptz, OUT hi timestamptz) LANGUAGE sql AS 'SELECT statement_timestamp(), statement_timestamp()'`,
    )
    try {
      const r = await lateCommit()
      expect(r.others).toBe(17)
      expect(r.delivered).toBe(false)
    } finally {
      await t.db.pool.query(def)
    }
  })
})

describe('seeks and retention', () => {
  /** Three rows stored two days ago (DataHub-style, committed long since), then seven sent now. */
  async function oldAndNew(): Promise<string> {
    const topic = await t.createTopic(1)
    await t.db.pool.query(`SELECT ${q('ensure_partitions')}(now() - interval '2 days')`)
    const writer = await t.db.connect()
    for (let i = 0; i < 3; i++) {
      await writer.query('BEGIN')
      await datahubInsert(writer, topic, 0, `old-${i}`, new Date(Date.now() - 2 * 86_400_000).toISOString())
      await writer.query('COMMIT')
    }
    const producer = await t.producer()
    await producer.send({ topic, messages: Array.from({ length: 7 }, (_, i) => ({ value: `new-${i}`, partition: 0 })) })
    return topic
  }

  it('a seek back to an offset in an old time partition delivers from there again', async () => {
    const topic = await oldAndNew()
    const consumer = await t.consumer({ groupId: uniqueName('seek'), maxWaitTimeInMs: 200 })
    const got = await collect(consumer, topic)
    expect(await until(() => got.length === 10, 10_000)).toBe(true)
    // more drained fetches: the floors are past the old partition now
    const producer = await t.producer()
    for (let i = 0; i < 5; i++) {
      await producer.send({ topic, messages: [{ value: `more-${i}`, partition: 0 }] })
      await sleep(300)
    }
    expect(await until(() => got.length === 15, 10_000)).toBe(true)
    consumer.seek({ topic, partition: 0, offset: '1' })
    expect(await until(() => got.length >= 15 + 14, 10_000)).toBe(true)
    expect(got.slice(15, 17).map((g) => g.value)).toEqual(['old-1', 'old-2'])
  })

  it('keeps delivering and committing after retention dropped the partition its first rows were in', async () => {
    const topic = await oldAndNew()
    const group = uniqueName('retention')
    const consumer = await t.consumer({ groupId: group, maxWaitTimeInMs: 200 })
    const got = await collect(consumer, topic)
    expect(await until(() => got.length === 10, 10_000)).toBe(true)
    const { rows } = await t.db.pool.query<{ child: string }>(
      `SELECT m.tableoid::regclass::text AS child FROM ${q('message')} m WHERE m.routing_key = 'old-0'`,
    )
    await t.db.pool.query(`DROP TABLE ${rows[0]!.child}`)
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'after-drop', partition: 0 }] })
    expect(await until(() => got.some((g) => g.value === 'after-drop'), 10_000)).toBe(true)
    await consumer.disconnect()
    const offsets = await t.db.pool.query<{ offset_value: string }>(
      `SELECT offset_value::text FROM ${q('consumer_offset')} WHERE consumer_group = $1`,
      [group],
    )
    expect(offsets.rows[0]!.offset_value).toBe('11')
  })
})

describe('priorities', () => {
  it('an urgent message sent after the floors moved comes first, and the stored offset covers only what was processed', async () => {
    const topic = await t.createTopic(1)
    const group = uniqueName('prio')
    const producer = await t.producer()
    const consumer = await t.consumer({ groupId: group, maxWaitTimeInMs: 200 })
    const batches: string[][] = []
    let hold: Promise<void> | undefined
    let release!: () => void
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachBatch: async ({ batch }) => {
        batches.push(batch.messages.map((m) => m.value!.toString()))
        if (hold) await hold
      },
    })
    for (let i = 0; i < 3; i++) {
      await producer.send({ topic, messages: [{ value: `n${i}`, partition: 0, priority: 5 }] as never[] })
      await sleep(300)
    }
    expect(await until(() => batches.flat().length === 3, 10_000)).toBe(true)
    // the member holds its next batch while both priorities are stored
    hold = new Promise<void>((r) => (release = r))
    await producer.send({ topic, messages: [{ value: 'n3', partition: 0, priority: 5 }] as never[] })
    expect(await until(() => batches.flat().length === 4, 10_000)).toBe(true)
    await producer.send({
      topic,
      messages: [
        { value: 'n4', partition: 0, priority: 5 },
        { value: 'urgent', partition: 0, priority: 0 },
      ] as never[],
    })
    await sleep(300)
    release()
    hold = undefined
    expect(await until(() => batches.flat().length === 6, 10_000)).toBe(true)
    expect(batches.flat().slice(4)).toEqual(['urgent', 'n4'])
    await consumer.disconnect()
    const offsets = await t.db.pool.query<{ offset_value: string }>(
      `SELECT offset_value::text FROM ${q('consumer_offset')} WHERE consumer_group = $1`,
      [group],
    )
    expect(offsets.rows[0]!.offset_value).toBe('6')
  })
})
