// A producer process: a seeded random mix of plain sends and batches with keys and priorities, idempotent sends,
// transactions that commit or abort across topics and partitions in random order, and outbox sends inside the
// caller's own transaction at each isolation level, some rolled back. Every outcome goes to the history.
import type { Message, Producer, RecordMetadata } from 'kafkajs'
import pg from 'pg'
import type { PgQueueProducer } from '../../../src/producer/index.js'
import { POISON_TAG, priorityTag, type Via } from '../history.js'
import type { ProducerOp, ProducerSpec, TopicPlan } from '../spec.js'
import { sleep, startWorker } from './common.js'

const w = startWorker<ProducerSpec>()
const { spec, rng, rec, kafka } = w
const plain = kafka.producer({ retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 } })
const idempotent = kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: { initialRetryTime: 100, maxRetryTime: 1000 } })
const transactional = kafka.producer({
  transactionalId: `${spec.dir.split('/').pop()}-${spec.id}`,
  idempotent: true,
  maxInFlightRequests: 1,
  retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 },
})
const topics = spec.topics
let counter = 0
let txns = 0
const nextValue = (priority: number | undefined, poison: boolean) =>
  `${spec.writer}/${counter++}${poison ? POISON_TAG : ''}${priority === undefined ? '' : priorityTag(priority)}`

interface Draft {
  topic: string
  message: Message & { priority?: number }
}

function draft(topic: TopicPlan, explicitPartition: boolean): Draft {
  const priority = spec.priorities && rng.chance(0.3) ? rng.int(0, 9) : undefined
  const poison = topic.poison === true && rng.chance(0.1)
  const message: Message & { priority?: number } = { key: rng.chance(0.8) ? `k${rng.int(0, 19)}` : null, value: nextValue(priority, poison) }
  if (explicitPartition) message.partition = rng.int(0, topic.partitions - 1)
  if (priority !== undefined) message.priority = priority
  return { topic: topic.name, message }
}

const drafts = (n: number, explicitPartition = false, pool: TopicPlan[] = topics) =>
  Array.from({ length: n }, () => draft(rng.pick(pool), explicitPartition))

const byTopic = (list: Draft[]) => {
  const m = new Map<string, Message[]>()
  for (const d of list) m.set(d.topic, [...(m.get(d.topic) ?? []), d.message])
  return [...m].map(([topic, messages]) => ({ topic, messages }))
}

/** Acks with offsets: a send's messages to one partition are contiguous from the partition's baseOffset. */
function ackAll(via: Via, list: Draft[], meta?: RecordMetadata[]) {
  const next = new Map<string, bigint>()
  for (const m of meta ?? [])
    if (m.baseOffset !== undefined && BigInt(m.baseOffset) >= 0n) next.set(`${m.topicName}/${m.partition}`, BigInt(m.baseOffset))
  // which partition each message went to is only known per partition; with one partition per topic in the answer
  // (or an explicit partition), the offsets can be attributed
  const partitionsOf = new Map<string, number[]>()
  for (const m of meta ?? []) partitionsOf.set(m.topicName, [...(partitionsOf.get(m.topicName) ?? []), m.partition])
  for (const d of list) {
    const parts = partitionsOf.get(d.topic) ?? []
    const partition = d.message.partition ?? (parts.length === 1 ? parts[0] : undefined)
    const key = `${d.topic}/${partition}`
    const offset = partition === undefined ? undefined : next.get(key)
    if (offset !== undefined) next.set(key, offset + 1n)
    rec.record({
      k: 'ack',
      via,
      topic: d.topic,
      value: String(d.message.value),
      ...(partition === undefined ? {} : { partition }),
      ...(offset === undefined ? {} : { offset: offset.toString() }),
    })
  }
}

/** A plain send retried by the application until it is acknowledged: at-least-once (it may be stored twice). */
async function sendPlain(via: 'send' | 'batch', list: Draft[], single: boolean) {
  for (;;) {
    try {
      const meta = await w.track(via, () =>
        single ? plain.send({ topic: list[0].topic, messages: list.map((d) => d.message) }) : plain.sendBatch({ topicMessages: byTopic(list) }),
      )
      ackAll(via, list, meta)
      return
    } catch {
      if (w.stopping) {
        rec.record({ k: 'amb', via, values: list.map((d) => String(d.message.value)), error: 'stopped while retrying' })
        return
      }
      await sleep(200)
    }
  }
}

async function sendIdempotent(list: Draft[]) {
  try {
    const meta = await w.track('idempotent', () => idempotent.send({ topic: list[0].topic, messages: list.map((d) => d.message) }))
    ackAll('idempotent', list, meta)
  } catch (e) {
    rec.record({ k: 'amb', via: 'idempotent', values: list.map((d) => String(d.message.value)), error: String((e as Error).message) })
  }
}

async function transaction(list: Draft[]) {
  const id = `t${txns++}`
  const values = list.map((d) => String(d.message.value))
  const commit = rng.chance(0.75)
  rec.record({ k: 'txb', id, via: 'txn', values })
  let tx: Awaited<ReturnType<Producer['transaction']>> | undefined
  try {
    tx = await w.track('txn.begin', () => transactional.transaction())
    for (const d of list) await w.track('txn.send', () => tx!.send({ topic: d.topic, messages: [d.message] }))
  } catch {
    await tx?.abort().catch(() => undefined)
    rec.record({ k: 'abort', via: 'txn', values, reason: 'its transaction failed before COMMIT' })
    return
  }
  if (!commit) {
    await w.track('txn.abort', () => tx!.abort()).catch(() => undefined)
    rec.record({ k: 'abort', via: 'txn', values, reason: 'its transaction was aborted' })
    return
  }
  rec.record({ k: 'txc', id })
  try {
    await w.track('txn.commit', () => tx!.commit())
    ackAll('txn', list)
  } catch (e) {
    rec.record({ k: 'amb', via: 'txn', values, error: String((e as Error).message) })
  }
}

const LEVELS = { 'outbox-rc': 'READ COMMITTED', 'outbox-rr': 'REPEATABLE READ', 'outbox-ser': 'SERIALIZABLE' } as const
let bizPool: pg.Pool | undefined

/** The transactional outbox: a business row and the messages commit or roll back together. */
async function outbox(op: keyof typeof LEVELS, list: Draft[]) {
  bizPool ??= new pg.Pool({ connectionString: spec.pgUrl, max: 2, connectionTimeoutMillis: 3000 })
  bizPool.on('error', () => undefined)
  const id = `o${txns++}`
  const values = list.map((d) => String(d.message.value))
  const commit = rng.chance(0.75)
  rec.record({ k: 'txb', id, via: 'outbox', values })
  let client: pg.PoolClient | undefined
  try {
    client = await w.track(`${op}.connect`, () => bizPool!.connect())
    client.on('error', () => undefined)
    await w.track(`${op}.begin`, () => client!.query(`BEGIN ISOLATION LEVEL ${LEVELS[op]}`))
    await w.track(`${op}.business`, () =>
      client!.query(`INSERT INTO ${spec.bizTable} (id, level) VALUES ($1, $2)`, [`${spec.writer}/${id}`, LEVELS[op]]),
    )
    for (const d of list) await w.track(`${op}.send`, () => (plain as PgQueueProducer).sendWith(client!, { topic: d.topic, messages: [d.message] }))
  } catch {
    await client?.query('ROLLBACK').catch(() => undefined)
    client?.release(true)
    rec.record({ k: 'abort', via: 'outbox', values, reason: 'its outbox transaction failed before COMMIT' })
    return
  }
  if (!commit) {
    await client.query('ROLLBACK').catch(() => undefined)
    client.release()
    rec.record({ k: 'abort', via: 'outbox', values, reason: 'its outbox transaction was rolled back' })
    return
  }
  rec.record({ k: 'txc', id })
  try {
    await w.track(`${op}.commit`, () => client!.query('COMMIT'))
    client.release()
    ackAll('outbox', list)
  } catch (e) {
    client.release(true)
    // a refused COMMIT (serialization failure) rolled everything back; a lost connection leaves it unknown
    const code = (e as { code?: string }).code
    if (code) rec.record({ k: 'abort', via: 'outbox', values, reason: `its COMMIT was refused (${code})` })
    else rec.record({ k: 'amb', via: 'outbox', values, error: String((e as Error).message) })
  }
}

/** A transaction's messages: partitions in random order, or all on one partition when spanning is not wanted. */
function txnDrafts(n: number): Draft[] {
  const list = drafts(n, true)
  if (spec.multiPartition) return list
  const { topic, message } = list[0]
  return list.map((d) => ({ topic, message: { ...d.message, partition: message.partition } }))
}

async function step(op: ProducerOp) {
  const single = rng.pick(topics)
  switch (op) {
    case 'send':
      return sendPlain('send', drafts(rng.int(1, 5), rng.chance(0.2), [single]), true)
    case 'batch':
      return sendPlain('batch', drafts(rng.int(2, 8), rng.chance(0.2)), false)
    case 'idempotent':
      return sendIdempotent(drafts(rng.int(1, 4), true, [single]))
    case 'txn':
      return transaction(txnDrafts(rng.int(1, 6)))
    default:
      return outbox(op, txnDrafts(rng.int(1, 4)))
  }
}

async function main() {
  const needs = new Set(spec.ops)
  await plain.connect()
  if (needs.has('idempotent')) await idempotent.connect()
  if (needs.has('txn')) await transactional.connect()
  w.ready()
  w.onStop(async () => {
    // let the current operation end (the main loop sees `stopping`), then disconnect
    await done
  })
  for (;;) {
    if (w.stopping) break
    await step(rng.pick(spec.ops)).catch((e) => w.recordError('step', e))
    await sleep(rng.int(0, 25))
  }
  await Promise.all([plain.disconnect(), idempotent.disconnect(), transactional.disconnect(), bizPool?.end()].map((p) => p?.catch(() => undefined)))
}

const done = main().catch((e) => w.recordError('main', e))
