// Producer transactions on PostgreSQL: commit/abort visibility, sendOffsets, KafkaJS errors, zombie fencing,
// idempotent retries after an ambiguous COMMIT, and the transactional outbox.
import { describe, expect, it } from 'vitest'
import { KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import { waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'
import { startCuttingProxy } from '../../helpers/tcpProxy.js'

const t = useTestKafka('transactions')

async function read(topic: string, expected: number, groupId = uniqueName('reader')): Promise<string[]> {
  const consumer = await t.consumer({ groupId })
  await consumer.subscribe({ topic, fromBeginning: true })
  const seen: string[] = []
  await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) })
  await waitFor(() => seen.length >= expected)
  // give a stray extra message the chance to show up before judging
  const producer = await t.producer()
  await producer.send({ topic, messages: [{ value: '__end__', partition: 0 }] })
  await waitFor(() => seen.includes('__end__'))
  await consumer.disconnect()
  return seen.filter((v) => v !== '__end__')
}

async function highWatermark(topic: string): Promise<string> {
  const admin = t.kafka.admin()
  await admin.connect()
  const offsets = await admin.fetchTopicOffsets(topic)
  await admin.disconnect()
  return offsets.find((o) => o.partition === 0)!.high
}

describe('transactions', () => {
  it('committed messages become visible, aborted ones never do and leave no offset gap', async () => {
    const topic = uniqueName('tx')
    const producer = await t.producer({ transactionalId: uniqueName('tx-id') })
    const aborted = await producer.transaction()
    await aborted.send({
      topic,
      messages: [
        { value: 'aborted-1', partition: 0 },
        { value: 'aborted-2', partition: 0 },
      ],
    })
    await aborted.abort()
    expect(aborted.isActive()).toBe(false)
    const committed = await producer.transaction()
    const [meta] = await committed.send({ topic, messages: [{ value: 'committed-1', partition: 0 }] })
    expect(meta.baseOffset).toBe('-1') // offsets inside a transaction are assigned at commit
    await committed.commit()
    expect(await read(topic, 1)).toEqual(['committed-1'])
    expect(await highWatermark(topic)).toBe('2') // committed-1 and the __end__ marker: the abort used no offsets
  })

  it('an open transaction does not stall other producers of the partition, and commit order is offset order', async () => {
    const topic = uniqueName('open')
    const plain = await t.producer()
    const producer = await t.producer({ transactionalId: uniqueName('open-id') })
    const tx = await producer.transaction()
    await tx.send({
      topic,
      messages: [
        { value: 'in-tx-1', partition: 0 },
        { value: 'in-tx-2', partition: 0 },
      ],
    })
    const [meta] = await plain.send({ topic, messages: [{ value: 'plain', partition: 0 }] })
    expect(meta.baseOffset).toBe('0')
    await tx.commit()
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen: Array<[string, string]> = []
    await consumer.run({ eachMessage: async ({ message }) => void seen.push([message.offset, message.value!.toString()]) })
    await waitFor(() => seen.length === 3)
    expect(seen).toEqual([
      ['0', 'plain'],
      ['1', 'in-tx-1'],
      ['2', 'in-tx-2'],
    ])
  })

  it('sendOffsets commits the group offsets atomically with the messages', async () => {
    const source = uniqueName('src')
    const sink = uniqueName('sink')
    const groupId = uniqueName('ctp')
    const plain = await t.producer()
    await plain.send({
      topic: source,
      messages: [
        { value: 'a', partition: 0 },
        { value: 'b', partition: 0 },
      ],
    })
    const producer = await t.producer({ transactionalId: uniqueName('ctp-id') })
    const tx = await producer.transaction()
    await tx.send({ topic: sink, messages: [{ value: 'A' }, { value: 'B' }] })
    await tx.sendOffsets({ consumerGroupId: groupId, topics: [{ topic: source, partitions: [{ partition: 0, offset: '2' }] }] })
    const admin = t.kafka.admin()
    await admin.connect()
    const before = await admin.fetchOffsets({ groupId, topics: [source] })
    await tx.commit()
    const after = await admin.fetchOffsets({ groupId, topics: [source] })
    await admin.disconnect()
    expect(before[0].partitions.find((p) => p.partition === 0)!.offset).toBe('-1')
    expect(after[0].partitions.find((p) => p.partition === 0)!.offset).toBe('2')
  })

  it('gives KafkaJS errors for misuse', async () => {
    const plain = await t.producer()
    await expect(plain.transaction()).rejects.toThrow(new KafkaJSNonRetriableError('Must provide transactional id for transactional producer'))
    const producer = await t.producer({ transactionalId: uniqueName('misuse') })
    const tx = await producer.transaction()
    await expect(producer.transaction()).rejects.toThrow(
      'There is already an ongoing transaction for this producer. Please end the transaction before beginning another.',
    )
    await tx.commit()
    await expect(tx.send({ topic: 'x', messages: [{ value: 'v' }] })).rejects.toThrow('Cannot continue to use transaction once ended')
    await expect(tx.commit()).rejects.toThrow('Cannot continue to use transaction once ended')
  })

  it('a second producer with the same transactionalId fences the first', async () => {
    const topic = uniqueName('fence')
    const id = uniqueName('fenced')
    const zombie = await t.producer({ transactionalId: id })
    const zombieTx = await zombie.transaction()
    await zombieTx.send({ topic, messages: [{ value: 'zombie', partition: 0 }] })
    const successor = t.newKafka().producer({ transactionalId: id })
    await successor.connect()
    const tx = await successor.transaction()
    await tx.send({ topic, messages: [{ value: 'successor', partition: 0 }] })
    await tx.commit()
    const err = await zombieTx.commit().catch((e) => e)
    expect(err.name).toBe('KafkaJSProtocolError')
    expect(err.type).toBe('INVALID_PRODUCER_EPOCH')
    await successor.disconnect()
    expect(await read(topic, 1)).toEqual(['successor'])
  })
})

describe('idempotent producer', () => {
  for (const idempotent of [true, false]) {
    it(`${idempotent ? 'does not duplicate' : 'without idempotence, duplicates'} a send whose COMMIT answer was lost`, async () => {
      const proxy = await startCuttingProxy(t.db.connectionString)
      const kafka = t.newKafka({ connectionString: proxy.connectionString })
      const topic = uniqueName('idem')
      const producer = kafka.producer({ idempotent, retry: { initialRetryTime: 50, retries: 5 } })
      await producer.connect()
      await producer.send({ topic, messages: [{ value: 'first', partition: 0 }] })
      proxy.cutAfterNextRequest()
      const [meta] = await producer.send({
        topic,
        messages: [
          { value: 'cut', partition: 0 },
          { value: 'cut-2', partition: 0 },
        ],
      })
      expect(proxy.cuts).toBe(1)
      await producer.send({ topic, messages: [{ value: 'last', partition: 0 }] })
      await producer.disconnect()
      const values = await read(topic, 4)
      if (idempotent) {
        expect(meta.baseOffset).toBe('1')
        expect(values).toEqual(['first', 'cut', 'cut-2', 'last'])
      } else {
        // the retry wrote the batch a second time: exactly what idempotence prevents
        expect(values).toEqual(['first', 'cut', 'cut-2', 'cut', 'cut-2', 'last'])
      }
    })
  }
})

describe('a transaction whose COMMIT answer is lost', () => {
  // commit() sends the epoch check, then COMMIT: the cut lands on COMMIT (skip 1) or on the check before it (skip 0)
  for (const [skip, outcome] of [
    [1, 'committed'],
    [0, 'rolled back'],
  ] as const) {
    it(`commit() reports what the server did (${outcome}), so a retry copies nothing twice`, async () => {
      const proxy = await startCuttingProxy(t.db.connectionString)
      const kafka = t.newKafka({ connectionString: proxy.connectionString })
      const topic = uniqueName('lost_commit')
      const producer = kafka.producer({ transactionalId: uniqueName('tx-id'), idempotent: true, maxInFlightRequests: 1 })
      await producer.connect()
      const tx = await producer.transaction()
      await tx.send({ topic, messages: [{ value: 'once', partition: 0 }] })
      proxy.cutAfterNextRequest(skip)
      const result = await tx.commit().then(
        () => 'committed',
        (e: Error) => e,
      )
      expect(proxy.cuts).toBe(1)
      if (outcome === 'committed') {
        // before: "Connection terminated unexpectedly", and an application retrying the batch wrote it twice
        expect(result).toBe('committed')
      } else {
        expect(result).toBeInstanceOf(Error)
        expect((result as { retriable?: boolean }).retriable).toBe(true)
        const retry = await producer.transaction()
        await retry.send({ topic, messages: [{ value: 'once', partition: 0 }] })
        await retry.commit()
      }
      await producer.disconnect()
      expect(await read(topic, 1)).toEqual(['once'])
    })
  }
})

describe('transactional outbox', () => {
  it('1,000 business transactions, a third rolled back: exactly the committed ones are delivered', async () => {
    const topic = uniqueName('outbox')
    const table = `${t.db.schema}.orders`
    await t.db.pool.query(`CREATE TABLE ${table} (id int PRIMARY KEY, state text NOT NULL)`)
    const producer = await t.producer()
    const committed = new Set<string>()
    let seed = 42
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
    for (let id = 0; id < 1000; id++) {
      const client = await t.db.pool.connect()
      try {
        await client.query('BEGIN')
        await client.query(`INSERT INTO ${table} (id, state) VALUES ($1, 'placed')`, [id])
        await producer.sendWith(client, { topic, messages: [{ key: `order-${id % 17}`, value: `order-${id}` }] })
        if (random() < 1 / 3) await client.query('ROLLBACK')
        else {
          await client.query('COMMIT')
          committed.add(`order-${id}`)
        }
      } finally {
        client.release()
      }
    }
    const rows = await t.db.pool.query(`SELECT count(*)::int AS n FROM ${table}`)
    expect(rows.rows[0].n).toBe(committed.size)
    const delivered = await read(topic, committed.size)
    expect(delivered.length).toBe(committed.size)
    expect(new Set(delivered)).toEqual(committed)
    console.log(`outbox: ${committed.size} committed, ${1000 - committed.size} rolled back, ${delivered.length} delivered`)
  }, 120_000)
})
