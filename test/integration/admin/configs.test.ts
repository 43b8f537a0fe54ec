import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigResourceTypes, ConfigSource } from '../../../src/kafkajs/exports.js'
import { KafkaJSNonRetriableError, KafkaJSNotImplemented, KafkaJSProtocolError } from '../../../src/kafkajs/errors.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('admin_configs')
const admin = t.kafka.admin()
beforeAll(() => admin.connect())
afterAll(() => admin.disconnect())

const TOPIC = ConfigResourceTypes.TOPIC

async function newTopic(configEntries: Array<{ name: string; value: string }> = []): Promise<string> {
  const topic = uniqueName('cfg')
  await admin.createTopics({ topics: [{ topic, configEntries }] })
  return topic
}

/** name -> [value, source] of a topic's described entries */
async function described(topic: string, configNames?: string[]): Promise<Record<string, [string, number]>> {
  const { resources } = await admin.describeConfigs({ resources: [{ type: TOPIC, name: topic, configNames }], includeSynonyms: false })
  return Object.fromEntries(resources[0]!.configEntries.map((e) => [e.configName, [e.configValue, e.configSource]]))
}

const columns = async (topic: string) =>
  (
    await t.db.pool.query(
      `SELECT retention_max_age_seconds AS seconds, max_total_payload_bytes::text AS bytes, config
       FROM "${t.db.schema}".metadata_queue_topic WHERE topic_name = $1`,
      [topic],
    )
  ).rows[0] as { seconds: number; bytes: string; config: Record<string, string> }

describe('describeConfigs', () => {
  const kafkaDefault = (configName: string, configValue: string) => ({
    configName,
    configValue,
    readOnly: false,
    isDefault: true,
    configSource: ConfigSource.DEFAULT_CONFIG,
    isSensitive: false,
    configSynonyms: [],
  })

  it("returns the topic's entries, the compaction configs' defaults and retention.ms / retention.bytes in KafkaJS's shape", async () => {
    const topic = await newTopic([
      { name: 'cleanup.policy', value: 'delete' },
      { name: 'retention.ms', value: '86400000' },
    ])
    const res = await admin.describeConfigs({ resources: [{ type: TOPIC, name: topic }], includeSynonyms: false })
    expect(res).toEqual({
      resources: [
        {
          errorCode: 0,
          errorMessage: null,
          resourceType: TOPIC,
          resourceName: topic,
          configEntries: [
            {
              configName: 'cleanup.policy',
              configValue: 'delete',
              readOnly: false,
              isDefault: false,
              configSource: ConfigSource.TOPIC_CONFIG,
              isSensitive: false,
              configSynonyms: [],
            },
            // the compaction configs, unset here, at Kafka's defaults (as Kafka's describeConfigs lists them)
            kafkaDefault('delete.retention.ms', '86400000'),
            kafkaDefault('max.compaction.lag.ms', '9223372036854775807'),
            kafkaDefault('min.cleanable.dirty.ratio', '0.5'),
            kafkaDefault('min.compaction.lag.ms', '0'),
            kafkaDefault('retention.bytes', '-1'),
            {
              configName: 'retention.ms',
              configValue: '86400000',
              readOnly: false,
              isDefault: false,
              configSource: ConfigSource.TOPIC_CONFIG,
              isSensitive: false,
              configSynonyms: [],
            },
            kafkaDefault('segment.ms', '604800000'),
          ],
        },
      ],
    })
    expect((await columns(topic)).seconds).toBe(86400)
  })

  it('reads retention back from the columns, as maintenance applies them', async () => {
    const topic = await newTopic([{ name: 'retention.ms', value: '1500' }])
    expect((await described(topic))['retention.ms']).toEqual(['1500', ConfigSource.TOPIC_CONFIG]) // stored 2 s: shown as written
    expect(await described(uniqueName('x')).catch((e) => e)).toMatchObject({ type: 'UNKNOWN_TOPIC_OR_PARTITION' })
    // DataHub tooling changes the column directly
    await t.db.pool.query(`UPDATE "${t.db.schema}".metadata_queue_topic SET retention_max_age_seconds = 3600 WHERE topic_name = $1`, [topic])
    expect((await described(topic))['retention.ms']).toEqual(['3600000', ConfigSource.TOPIC_CONFIG])
    const plain = await newTopic()
    expect((await described(plain))['retention.ms']).toEqual(['604800000', ConfigSource.DEFAULT_CONFIG])
  })

  it('narrows to configNames, adds synonyms on request and has nothing for brokers', async () => {
    const topic = await newTopic([{ name: 'cleanup.policy', value: 'compact' }])
    expect(Object.keys(await described(topic, ['cleanup.policy', 'nope']))).toEqual(['cleanup.policy'])
    const { resources } = await admin.describeConfigs({
      resources: [
        { type: TOPIC, name: topic, configNames: ['cleanup.policy'] },
        { type: ConfigResourceTypes.BROKER, name: '0' },
      ],
      includeSynonyms: true,
    })
    expect(resources[0]!.configEntries[0]!.configSynonyms).toEqual([
      { configName: 'cleanup.policy', configValue: 'compact', configSource: ConfigSource.TOPIC_CONFIG },
    ])
    expect(resources[1]).toMatchObject({ resourceType: ConfigResourceTypes.BROKER, resourceName: '0', errorCode: 0, configEntries: [] })
  })

  it('validates like KafkaJS', async () => {
    const cases: Array<[unknown, string]> = [
      [undefined, 'Invalid resources array undefined'],
      [[], 'Resources array cannot be empty'],
      [[{ type: 99, name: 'x' }], 'Invalid resource type 99: {"type":99,"name":"x"}'],
      [[{ type: TOPIC, name: '' }], 'Invalid resource name : {"type":2,"name":""}'],
      [[{ type: TOPIC, name: 'x', configNames: 'a' }], 'Invalid resource configNames a: {"type":2,"name":"x","configNames":"a"}'],
    ]
    for (const [resources, message] of cases) {
      const err = await admin.describeConfigs({ resources, includeSynonyms: false } as never).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
      expect((err as Error).message).toBe(message)
    }
  })
})

describe('alterConfigs', () => {
  it("replaces the topic's configuration (Kafka's AlterConfigs), columns included", async () => {
    const topic = await newTopic([
      { name: 'retention.ms', value: '60000' },
      { name: 'cleanup.policy', value: 'delete' },
    ])
    const res = await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: TOPIC, name: topic, configEntries: [{ name: 'retention.bytes', value: '1048576' }] }],
    })
    expect(res).toEqual({ resources: [{ errorCode: 0, errorMessage: null, resourceType: TOPIC, resourceName: topic }] })
    expect(await columns(topic)).toEqual({ seconds: 604800, bytes: '1048576', config: { 'retention.bytes': '1048576' } })
    expect(await described(topic)).toMatchObject({
      'cleanup.policy': ['delete', ConfigSource.DEFAULT_CONFIG], // replaced: back to Kafka's default
      'retention.bytes': ['1048576', ConfigSource.TOPIC_CONFIG],
      'retention.ms': ['604800000', ConfigSource.DEFAULT_CONFIG],
    })
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '-1' }] }],
    })
    expect(await columns(topic)).toMatchObject({ seconds: 0, bytes: '0' })
    expect((await described(topic))['retention.ms']).toEqual(['-1', ConfigSource.TOPIC_CONFIG])
  })

  it('validateOnly changes nothing; bad values are INVALID_CONFIG; unknown topics reject; brokers are not alterable', async () => {
    const topic = await newTopic([{ name: 'cleanup.policy', value: 'delete' }])
    const before = await columns(topic)
    await admin.alterConfigs({
      validateOnly: true,
      resources: [{ type: TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '1000' }] }],
    })
    expect(await columns(topic)).toEqual(before)
    const bad = await admin
      .alterConfigs({ validateOnly: false, resources: [{ type: TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '-7' }] }] })
      .catch((e: unknown) => e)
    expect(bad).toBeInstanceOf(KafkaJSProtocolError)
    expect(bad).toMatchObject({ type: 'INVALID_CONFIG', code: 40 })
    await expect(
      admin.alterConfigs({ validateOnly: false, resources: [{ type: TOPIC, name: uniqueName('none'), configEntries: [] }] }),
    ).rejects.toMatchObject({ type: 'UNKNOWN_TOPIC_OR_PARTITION' })
    await expect(
      admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.BROKER, name: '0', configEntries: [] }] }),
    ).rejects.toBeInstanceOf(KafkaJSNotImplemented)
    expect(await columns(topic)).toEqual(before)
  })

  it('validates like KafkaJS', async () => {
    const cases: Array<[unknown, string]> = [
      [[{ type: TOPIC, name: 'x' }], 'Invalid resource configEntries undefined: {"type":2,"name":"x"}'],
      [
        [{ type: TOPIC, name: 'x', configEntries: [{ name: 'a', value: 1 }] }],
        'Invalid resource config value: {"type":2,"name":"x","configEntries":[{"name":"a","value":1}]}',
      ],
    ]
    for (const [resources, message] of cases) {
      await expect(admin.alterConfigs({ validateOnly: false, resources } as never)).rejects.toThrow(message)
    }
  })
})
