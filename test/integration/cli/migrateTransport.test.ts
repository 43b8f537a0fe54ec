// `migrate-transport` against the contract suite's Kafka broker (KAFKA_BROKERS, or with COMPAT_REQUIRE_KAFKA=1 the one
// compat-tests/broker finds or starts; skipped when neither is set):
// a pgQueue topic with three groups at different offsets goes to Kafka and back into another pgQueue schema; at each
// stop every group resumes exactly at the message it was at, messages keep key, headers, timestamp and partition, and
// a second run copies only what was produced since (the tail of a live cut-over).
import { promises as fs } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import type { Consumer, Kafka as KafkaJSKafka } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findBroker, type RunningBroker } from '../../../compat-tests/broker/index.js'
import { runCli } from '../../../src/cli/main.js'
import type { Kafka } from '../../../src/kafka.js'
import kafkajs from '../../../src/kafkajs/upstream.js'
import { logLevel } from '../../../src/kafkajs/exports.js'
import type { MigrationReport } from '../../../src/migrate/index.js'
import { useTestSchema } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const withKafka = Boolean(process.env.KAFKA_BROKERS) || process.env.COMPAT_REQUIRE_KAFKA === '1'
let broker: RunningBroker | undefined
let brokers: string[] = []

const PARTITIONS = 3
const PER_PARTITION = 400
/** committed offsets per partition, as each group left them */
const GROUPS: Record<string, number[]> = { early: [0, 0, 0], middle: [120, 7, 399], done: [PER_PARTITION, PER_PARTITION, PER_PARTITION] }

async function cli(args: string[]): Promise<{ code: number; report: MigrationReport; stderr: string }> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let out = ''
  let err = ''
  stdout.on('data', (d: Buffer) => (out += d.toString()))
  stderr.on('data', (d: Buffer) => {
    err += d.toString()
    if (process.env.MIGRATE_DEBUG) process.stderr.write(d)
  })
  const code = await runCli(args, { stdin: new PassThrough(), stdout, stderr })
  if (code !== 0) throw new Error(`exit ${code}: ${err}${out}`)
  return { code, report: JSON.parse(out) as MigrationReport, stderr: err }
}

const valueOf = (partition: number, n: number) => `p${partition}-m${n}`
// within the topic's retention.ms: Kafka applies retention to message timestamps, and would delete older copies at once
const BASE_TIMESTAMP = Date.now() - 3_600_000

/** What a consumer of `groupId` receives first on each partition, reading until every partition's end. */
async function firstDeliveries(
  makeConsumer: (groupId: string) => Consumer,
  topic: string,
  groupId: string,
  start: number[],
  ends: number[],
): Promise<Map<number, { first?: string; count: number }>> {
  const consumer = makeConsumer(groupId)
  const seen = new Map(ends.map((_, p) => [p, { first: undefined as string | undefined, count: 0, last: -1 }]))
  await consumer.connect()
  try {
    await consumer.subscribe({ topic })
    let reached!: () => void
    const done = new Promise<void>((resolve) => (reached = resolve))
    const check = () => [...seen].every(([p, s]) => s.last + 1 >= ends[p]! || start[p] === ends[p]) && reached()
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        const s = seen.get(partition)!
        s.first ??= message.value!.toString()
        s.count++
        s.last = Number(message.offset)
        check()
      },
    })
    check()
    await done
  } finally {
    await consumer.disconnect()
  }
  return new Map([...seen].map(([p, s]) => [p, { first: s.first, count: s.count }]))
}

describe.skipIf(!withKafka)('migrate-transport pgQueue -> Kafka -> pgQueue', () => {
  let real: KafkaJSKafka | undefined
  let dir = ''
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgq-migrate-'))
    broker = await findBroker((msg) => process.stderr.write(`[migrate-transport test] ${msg}\n`))
    brokers = broker.brokers
    real = new kafkajs.Kafka({ clientId: 'migrate-test', brokers, logLevel: logLevel.NOTHING })
  }, 300_000)
  const source = useTestKafka('migrate-src')
  const back = useTestSchema('migrate-back')
  const topic = uniqueName('migrate')
  const groupIds = Object.fromEntries(Object.keys(GROUPS).map((g) => [g, g])) as Record<string, string>
  afterAll(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true })
    if (!real) return
    const admin = real.admin()
    await admin.connect()
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined)
    await admin.deleteGroups(Object.values(groupIds)).catch(() => undefined)
    await admin.disconnect()
    await broker?.stop()
  }, 60_000)

  it('copies topic, messages and every group offset to Kafka and back; each group resumes where it was', async () => {
    for (const g of [...Object.keys(GROUPS), 'reset']) groupIds[g] = uniqueName(`mig-${g}`)
    const ids = (g: string) => groupIds[g]!
    // the source: 3 partitions, a config, messages with keys (some null), headers and old timestamps
    const admin = source.kafka.admin()
    await admin.connect()
    await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS, configEntries: [{ name: 'retention.ms', value: '604800000' }] }] })
    const producer = await source.producer()
    const messages = (from: number, to: number) =>
      Array.from({ length: PARTITIONS }, (_, partition) =>
        Array.from({ length: to - from }, (_, i) => ({
          partition,
          key: (from + i) % 5 === 0 ? null : `k${(from + i) % 7}`,
          value: valueOf(partition, from + i),
          headers: { n: String(from + i), bin: Buffer.from([0, 255, from % 256]) },
          timestamp: String(BASE_TIMESTAMP + from + i),
        })),
      ).flat()
    await producer.send({ topic, messages: messages(0, PER_PARTITION - 50) })
    for (const [g, offsets] of Object.entries(GROUPS)) {
      await admin.setOffsets({
        groupId: ids(g),
        topic,
        partitions: offsets.map((o, partition) => ({ partition, offset: String(Math.min(o, PER_PARTITION - 50)) })),
      })
    }
    const state = path.join(dir, 'to-kafka.json')
    const common = ['--brokers', brokers.join(','), '--url', source.db.connectionString, '--schema', source.db.schema, '--json']

    // dry run: the plan, nothing written
    const plan = await cli(['migrate-transport', topic, '--to', 'kafka', '--state', state, '--dry-run', ...common])
    expect(plan.report.topics[0]).toMatchObject({ topic, partitions: PARTITIONS, created: true, messages: PARTITIONS * (PER_PARTITION - 50) })
    expect(plan.report.topics[0]!.configEntries).toContainEqual({ name: 'retention.ms', value: '604800000' })
    const kAdmin = real!.admin()
    await kAdmin.connect()
    try {
      expect(await kAdmin.listTopics()).not.toContain(topic)

      // first pass while "live", then the tail produced meanwhile and the groups' final offsets: a second run
      const first = await cli(['migrate-transport', topic, '--to', 'kafka', '--state', state, ...common])
      expect(first.report.messages).toBe(PARTITIONS * (PER_PARTITION - 50))
      expect(first.report.verification?.ok).toBe(true)
      await producer.send({ topic, messages: messages(PER_PARTITION - 50, PER_PARTITION) })
      for (const [g, offsets] of Object.entries(GROUPS)) {
        await admin.setOffsets({ groupId: ids(g), topic, partitions: offsets.map((o, partition) => ({ partition, offset: String(o) })) })
      }
      // a group reset to the earliest offset stores Kafka's marker: it moves as the marker
      await admin.resetOffsets({ groupId: ids('reset'), topic, earliest: true })
      const second = await cli(['migrate-transport', topic, '--to', 'kafka', '--state', state, ...common])
      expect(second.report.messages).toBe(PARTITIONS * 50)
      expect(second.report.topics[0]!.totalCopied).toBe(PARTITIONS * PER_PARTITION)
      expect(second.report.verification).toMatchObject({ ok: true })
      expect(second.report.verification!.groups).toHaveLength(4 * PARTITIONS)
      console.log(
        `migrate-transport pgQueue -> Kafka: ${first.report.messages} messages at ${first.report.messagesPerSecond}/s (incl. topic creation and verification)`,
      )

      const [reset] = await kAdmin.fetchOffsets({ groupId: ids('reset'), topics: [topic] })
      expect(reset!.partitions.map((p) => p.offset)).toEqual(Array.from({ length: PARTITIONS }, () => '-2'))
      const [meta] = (await kAdmin.fetchTopicMetadata({ topics: [topic] })).topics
      expect(meta!.partitions).toHaveLength(PARTITIONS)
      for (const [g, offsets] of Object.entries(GROUPS)) {
        const [t] = await kAdmin.fetchOffsets({ groupId: ids(g), topics: [topic] })
        expect(t!.partitions.sort((a, b) => a.partition - b.partition).map((p) => Number(p.offset))).toEqual(offsets)
      }
      const ends = Array.from({ length: PARTITIONS }, () => PER_PARTITION)
      for (const g of ['early', 'middle']) {
        const got = await firstDeliveries((groupId) => real!.consumer({ groupId, maxWaitTimeInMs: 200 }), topic, ids(g), GROUPS[g]!, ends)
        for (let p = 0; p < PARTITIONS; p++) {
          const at = GROUPS[g]![p]!
          expect(got.get(p)).toEqual(at < PER_PARTITION ? { first: valueOf(p, at), count: PER_PARTITION - at } : { first: undefined, count: 0 })
        }
      }
      // the consumers above committed as they went: put them back where they were before moving back
      for (const [g, offsets] of Object.entries(GROUPS)) {
        await kAdmin.setOffsets({ groupId: ids(g), topic, partitions: offsets.map((o, partition) => ({ partition, offset: String(o) })) })
      }
    } finally {
      await kAdmin.disconnect()
      await admin.disconnect()
    }

    // and back, into another schema (migrated first, as `kafkajs-pgqueue migrate` would)
    const home: Kafka = source.newKafka({ connectionString: back.connectionString, schema: back.schema })
    const homeAdmin = home.admin()
    await homeAdmin.connect()
    const back1 = await cli([
      'migrate-transport',
      topic,
      '--to',
      'pgqueue',
      '--state',
      path.join(dir, 'to-pg.json'),
      '--brokers',
      brokers.join(','),
      '--url',
      back.connectionString,
      '--schema',
      back.schema,
      '--json',
    ])
    expect(back1.report.messages).toBe(PARTITIONS * PER_PARTITION)
    expect(back1.report.verification).toMatchObject({ ok: true })
    console.log(`migrate-transport Kafka -> pgQueue: ${back1.report.messages} messages at ${back1.report.messagesPerSecond}/s`)
    const ends = Array.from({ length: PARTITIONS }, () => PER_PARTITION)
    for (const g of ['early', 'middle']) {
      const got = await firstDeliveries((groupId) => home.consumer({ groupId, maxWaitTimeInMs: 200 }), topic, ids(g), GROUPS[g]!, ends)
      for (let p = 0; p < PARTITIONS; p++) {
        const at = GROUPS[g]![p]!
        expect(got.get(p)).toEqual(at < PER_PARTITION ? { first: valueOf(p, at), count: PER_PARTITION - at } : { first: undefined, count: 0 })
      }
    }
    try {
      const [t] = await homeAdmin.fetchOffsets({ groupId: ids('done'), topics: [topic] })
      expect(t!.partitions.map((p) => Number(p.offset))).toEqual(GROUPS.done)
      // key, headers and timestamp came through both moves
      const c = home.consumer({ groupId: uniqueName('peek') })
      await c.connect()
      await c.subscribe({ topic, fromBeginning: true })
      const firstMessage = new Promise<{ key: string | null; headers: unknown; timestamp: string; partition: number }>(
        (resolve) =>
          void c.run({
            eachMessage: async ({ partition, message }) =>
              resolve({ key: message.key?.toString() ?? null, headers: message.headers, timestamp: message.timestamp, partition }),
          }),
      )
      const m = await firstMessage
      await c.disconnect()
      expect(m.key).toBeNull() // message 0 of each partition has no key
      expect(m.timestamp).toBe(String(BASE_TIMESTAMP))
      expect(m.headers).toMatchObject({ n: Buffer.from('0'), bin: Buffer.from([0, 255, 0]) })
    } finally {
      await homeAdmin.disconnect()
    }
  }, 180_000)
})
