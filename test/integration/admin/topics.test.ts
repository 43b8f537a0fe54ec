import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  KafkaJSAggregateError,
  KafkaJSCreateTopicError,
  KafkaJSNonRetriableError,
  KafkaJSNotImplemented,
  KafkaJSProtocolError,
} from '../../../src/kafkajs/errors.js'
import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } from '../../../src/kafkajs/exports.js'
import { Kafka } from '../../../src/kafka.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('admin_topics')
const admin = t.kafka.admin()
beforeAll(() => admin.connect())
afterAll(() => admin.disconnect())

const topicRow = async (name: string) =>
  (
    await t.db.pool.query(
      `SELECT partition_count, retention_max_age_seconds, max_total_payload_bytes::text, config
       FROM "${t.db.schema}".metadata_queue_topic WHERE topic_name = $1`,
      [name],
    )
  ).rows[0] as { partition_count: number; retention_max_age_seconds: number; max_total_payload_bytes: string; config: object } | undefined

/** The rejection of `p`, for assertions on several fields. */
const rejection = async (p: Promise<unknown>): Promise<any> =>
  p.then(
    () => expect.unreachable('should reject'),
    (e: unknown) => e,
  )

describe('connect, events, unsupported calls', () => {
  it('emits admin.connect / admin.disconnect and rejects unknown event names', async () => {
    const other = t.kafka.admin()
    const seen: string[] = []
    other.on(other.events.CONNECT, (e) => void seen.push(e.type))
    other.on(other.events.DISCONNECT, (e) => void seen.push(e.type))
    await other.connect()
    await other.disconnect()
    expect(seen).toEqual(['admin.connect', 'admin.disconnect'])
    expect(() => other.on('admin.nope' as never, () => {})).toThrow(KafkaJSNonRetriableError)
    expect(other.logger().info).toBeTypeOf('function')
  })

  it('connects on demand, as KafkaJS does: calls work without connect(), disconnect() closes the pool', async () => {
    const lonely = new Kafka({ pgqueue: t.db.options }).admin()
    expect(Array.isArray(await lonely.listTopics())).toBe(true)
    await lonely.disconnect()
    await lonely.disconnect()
  })

  it('rejects ACL and reassignment calls with KafkaJSNotImplemented naming the transport', async () => {
    const acl = {
      resourceType: AclResourceTypes.TOPIC,
      resourceName: 'topic-name',
      resourcePatternType: ResourcePatternTypes.LITERAL,
      principal: 'User:bob',
      host: '*',
      operation: AclOperationTypes.ALL,
      permissionType: AclPermissionTypes.DENY,
    }
    const calls = [
      () => admin.createAcls({ acl: [acl] }),
      () => admin.describeAcls(acl),
      () => admin.deleteAcls({ filters: [acl] }),
      () => admin.alterPartitionReassignments({ topics: [] }),
      () => admin.listPartitionReassignments({}),
    ]
    for (const call of calls) {
      const err = await rejection(call())
      expect(err).toBeInstanceOf(KafkaJSNotImplemented)
      expect(err.message).toMatch(/^admin\.\w+ is not supported on the PostgreSQL transport: /)
    }
  })

  it('checks the arguments of ACL and reassignment calls first, with KafkaJS messages', async () => {
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => admin.createAcls({ acl: [] }), 'Empty ACL array'],
      [() => admin.deleteAcls({ filters: [] }), 'Empty ACL Filter array'],
      [() => admin.describeAcls({} as never), 'Invalid operation type undefined'],
      [() => admin.alterPartitionReassignments({ topics: null as never }), 'Invalid topics array null'],
      [() => admin.listPartitionReassignments({ topics: 'x' as never }), 'Invalid topics array x'],
    ]
    for (const [call, message] of cases) {
      const err = await rejection(call())
      expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
      expect(err.message).toBe(message)
    }
  })

  it('describes the database as a one-broker cluster without credentials', async () => {
    const cluster = await admin.describeCluster()
    expect(cluster.controller).toBe(0)
    expect(cluster.clusterId).toBe(`pgqueue:${t.db.schema}.metadata_queue`)
    expect(cluster.brokers).toHaveLength(1)
    expect(Object.keys(cluster.brokers[0]).sort()).toEqual(['host', 'nodeId', 'port'])
    expect(cluster.brokers[0].nodeId).toBe(0)
    expect(cluster.brokers[0].port).toBe(Number(new URL(t.db.connectionString).port || 5432))
  })
})

describe('createTopics', () => {
  it('creates topics with the given or the default partition count', async () => {
    const [a, b, c] = [uniqueName('ct-a'), uniqueName('ct-b'), uniqueName('ct-c')]
    await expect(admin.createTopics({ topics: [{ topic: a, numPartitions: 3 }, { topic: b }, { topic: c, numPartitions: -1 }] })).resolves.toBe(true)
    expect((await topicRow(a))?.partition_count).toBe(3)
    expect((await topicRow(b))?.partition_count).toBe(2) // DATAHUB_PGQUEUE default
    expect((await topicRow(c))?.partition_count).toBe(2)
    expect(await admin.listTopics()).toEqual(expect.arrayContaining([a, b, c]))
    const { topics } = await admin.fetchTopicMetadata({ topics: [a] })
    expect(topics).toEqual([
      {
        name: a,
        partitions: [0, 1, 2].map((partitionId) => ({ partitionErrorCode: 0, partitionId, leader: 0, replicas: [0], isr: [0], offlineReplicas: [] })),
      },
    ])
  })

  it('resolves false when topics already exist, still creating the new ones (as KafkaJS)', async () => {
    const [old, fresh] = [uniqueName('ct-old'), uniqueName('ct-new')]
    expect(await admin.createTopics({ topics: [{ topic: old }] })).toBe(true)
    expect(await admin.createTopics({ topics: [{ topic: old }] })).toBe(false)
    expect(await admin.createTopics({ topics: [{ topic: old }, { topic: fresh, numPartitions: 1 }] })).toBe(false)
    expect((await topicRow(fresh))?.partition_count).toBe(1)
  })

  it('validateOnly creates nothing', async () => {
    const name = uniqueName('ct-dry')
    expect(await admin.createTopics({ topics: [{ topic: name }], validateOnly: true })).toBe(true)
    expect(await topicRow(name)).toBeUndefined()
    await admin.createTopics({ topics: [{ topic: name }] })
    expect(await admin.createTopics({ topics: [{ topic: name }], validateOnly: true })).toBe(false)
  })

  it('maps retention.ms / retention.bytes onto the retention columns and keeps every entry', async () => {
    const [a, b] = [uniqueName('ct-ret'), uniqueName('ct-forever')]
    await admin.createTopics({
      topics: [
        {
          topic: a,
          configEntries: [
            { name: 'retention.ms', value: '1500' },
            { name: 'retention.bytes', value: '1048576' },
            { name: 'cleanup.policy', value: 'delete' },
          ],
        },
        {
          topic: b,
          configEntries: [
            { name: 'retention.ms', value: '-1' },
            { name: 'retention.bytes', value: '-1' },
          ],
        },
      ],
    })
    expect(await topicRow(a)).toMatchObject({
      retention_max_age_seconds: 2,
      max_total_payload_bytes: '1048576',
      config: { 'retention.ms': '1500', 'retention.bytes': '1048576', 'cleanup.policy': 'delete' },
    })
    expect(await topicRow(b)).toMatchObject({ retention_max_age_seconds: 0, max_total_payload_bytes: '0' })
  })

  it("rejects with KafkaJS's messages before touching the database", async () => {
    const cases: Array<[unknown, string]> = [
      [undefined, 'Invalid topics array undefined'],
      [[{ topic: 1 }], 'Invalid topics array, the topic names have to be a valid string'],
      [[{ topic: 'x' }, { topic: 'x' }], 'Invalid topics array, it cannot have multiple entries for the same topic'],
      [[{ topic: 'x', configEntries: {} }], 'Invalid configEntries for topic "x", must be an array'],
      [[{ topic: 'x', configEntries: [null] }], 'Invalid configEntries for topic "x". Entry 0 must be an object'],
      [[{ topic: 'x', configEntries: [{ name: 'a' }] }], 'Invalid configEntries for topic "x". Entry 0 must have a valid "value" property'],
    ]
    for (const [topics, message] of cases) {
      const err = await rejection(admin.createTopics({ topics } as never))
      expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
      expect(err.message).toBe(message)
    }
  })

  it('reports per-topic failures in a KafkaJSAggregateError and creates the valid topics', async () => {
    const [ok, zero, big, badRetention] = [uniqueName('ct-ok'), uniqueName('ct-zero'), uniqueName('ct-big'), uniqueName('ct-badret')]
    const err = await rejection(
      admin.createTopics({
        topics: [
          { topic: ok },
          { topic: zero, numPartitions: 0 },
          { topic: big, numPartitions: 4097 },
          { topic: 'bad name!' },
          { topic: badRetention, configEntries: [{ name: 'retention.ms', value: 'soon' }] },
        ],
      }),
    )
    expect(err).toBeInstanceOf(KafkaJSAggregateError)
    expect(err.message).toBe('Topic creation errors')
    const byTopic = Object.fromEntries(err.errors.map((e: any) => [e.topic, e]))
    for (const e of err.errors) expect(e).toBeInstanceOf(KafkaJSCreateTopicError)
    expect(byTopic[zero]).toMatchObject({ type: 'INVALID_PARTITIONS', code: 37, retriable: false })
    expect(byTopic[big]).toMatchObject({ type: 'INVALID_PARTITIONS', code: 37 })
    expect(byTopic['bad name!']).toMatchObject({ type: 'INVALID_TOPIC_EXCEPTION', code: 17 })
    expect(byTopic[badRetention]).toMatchObject({ type: 'INVALID_CONFIG', code: 40 })
    expect(err.errors.map((e: any) => e.topic)).toEqual([...err.errors.map((e: any) => e.topic)].sort((a, b) => a.localeCompare(b)))
    expect(await topicRow(ok)).toBeDefined()
    expect(await topicRow(zero)).toBeUndefined()
  })
})

describe('deleteTopics', () => {
  it('deletes a topic with its messages and offsets; the name can be used again from offset 0', async () => {
    const topic = uniqueName('dt')
    const producer = await t.producer()
    await producer.send({
      topic,
      messages: [
        { value: 'a', partition: 0 },
        { value: 'b', partition: 0 },
      ],
    })
    await admin.setOffsets({ groupId: uniqueName('g'), topic, partitions: [{ partition: 0, offset: '1' }] })
    await admin.deleteTopics({ topics: [topic] })
    expect(await admin.listTopics()).not.toContain(topic)
    const left = await t.db.pool.query(
      `SELECT (SELECT count(*) FROM "${t.db.schema}".metadata_queue_message) + (SELECT count(*) FROM "${t.db.schema}".metadata_queue_consumer_offset) AS n`,
    )
    expect(Number(left.rows[0].n)).toBe(0)
    // the producer shares the admin's topic cache: it must not write to the deleted row
    const [meta] = await producer.send({ topic, messages: [{ value: 'again', partition: 0 }] })
    expect(meta.baseOffset).toBe('0')
  })

  it('deletes the known topics and rejects with UNKNOWN_TOPIC_OR_PARTITION for the rest', async () => {
    const known = uniqueName('dt-known')
    await admin.createTopics({ topics: [{ topic: known }] })
    const err = await rejection(admin.deleteTopics({ topics: [known, uniqueName('dt-missing')] }))
    expect(err).toBeInstanceOf(KafkaJSProtocolError)
    expect(err).toMatchObject({ type: 'UNKNOWN_TOPIC_OR_PARTITION', code: 3 })
    expect(await topicRow(known)).toBeUndefined()
  })

  it('validates like KafkaJS', async () => {
    await expect(admin.deleteTopics({ topics: 'x' } as never)).rejects.toThrow('Invalid topics array x')
    await expect(admin.deleteTopics({ topics: [1] } as never)).rejects.toThrow('Invalid topics array, the names must be a valid string')
    await expect(admin.deleteTopics({ topics: [] })).resolves.toBeUndefined()
  })
})

describe('createPartitions', () => {
  it('grows a topic; producers and metadata see the new partitions', async () => {
    const topic = uniqueName('cp')
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] })
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'x', partition: 1 }] }) // caches the 2-partition row
    await expect(admin.createPartitions({ topicPartitions: [{ topic, count: 4 }] })).resolves.toBeUndefined()
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] })
    expect(topics[0].partitions.map((p) => p.partitionId)).toEqual([0, 1, 2, 3])
    const [meta] = await producer.send({ topic, messages: [{ value: 'y', partition: 3 }] })
    expect(meta).toMatchObject({ partition: 3, baseOffset: '0' })
    expect((await admin.fetchTopicOffsets(topic)).map((o) => o.high)).toEqual(['0', '1', '0', '1'])
  })

  it('rejects a count that does not grow with INVALID_PARTITIONS, unknown topics with UNKNOWN_TOPIC_OR_PARTITION', async () => {
    const topic = uniqueName('cp-same')
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] })
    for (const count of [3, 2, 4097]) {
      const err = await rejection(admin.createPartitions({ topicPartitions: [{ topic, count }] }))
      expect(err).toBeInstanceOf(KafkaJSProtocolError)
      expect(err).toMatchObject({ type: 'INVALID_PARTITIONS', message: 'Number of partitions is invalid' })
    }
    await expect(admin.createPartitions({ topicPartitions: [{ topic: uniqueName('cp-none'), count: 5 }] })).rejects.toMatchObject({
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
    })
    await admin.createPartitions({ topicPartitions: [{ topic, count: 5 }], validateOnly: true })
    expect((await topicRow(topic))?.partition_count).toBe(3)
  })

  it('validates like KafkaJS', async () => {
    const cases: Array<[unknown, string]> = [
      [undefined, 'Invalid topic partitions array undefined'],
      [[], 'Empty topic partitions array'],
      [[{ topic: 5, count: 2 }], 'Invalid topic partitions array, the topic names have to be a valid string'],
      [
        [
          { topic: 'a', count: 2 },
          { topic: 'a', count: 3 },
        ],
        'Invalid topic partitions array, it cannot have multiple entries for the same topic',
      ],
    ]
    for (const [topicPartitions, message] of cases) {
      await expect(admin.createPartitions({ topicPartitions } as never)).rejects.toThrow(message)
    }
  })
})

describe('fetchTopicMetadata', () => {
  it('returns every topic without arguments and rejects unknown topics', async () => {
    const topic = uniqueName('md')
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })
    const all = await admin.fetchTopicMetadata()
    expect(all.topics.map((x) => x.name)).toContain(topic)
    expect(all.topics.map((x) => x.name)).toEqual(await admin.listTopics())
    await expect(admin.fetchTopicMetadata({ topics: [topic, uniqueName('md-none')] })).rejects.toMatchObject({
      type: 'UNKNOWN_TOPIC_OR_PARTITION',
    })
    await expect(admin.fetchTopicMetadata({ topics: [''] })).rejects.toThrow('Invalid topic ')
  })
})
