// describeConfigs / alterConfigs for TOPIC resources. Broker resources have nothing to describe or change here:
// every setting of the PostgreSQL transport comes from DATAHUB_PGQUEUE_* / constructor options.
import type { DescribeConfigResponse, IResourceConfig, ResourceConfigQuery } from 'kafkajs'
import kafkajs from '../kafkajs/upstream.js'
import type { PgQueueContext } from '../client/context.js'
import { storeFor } from '../store/handle.js'
import type { TopicSettings } from '../store/topicConfig.js'
import { transaction } from '../store/transactions.js'
import { fail, notSupported } from './errors.js'
import { requireTopics } from './lookup.js'
import { effectiveEntries, settingsFromEntries } from './topicSettings.js'

const { ConfigResourceTypes, ConfigSource } = kafkajs
const RESOURCE_TYPES: readonly number[] = Object.values(ConfigResourceTypes).filter((v): v is number => typeof v === 'number')

type ConfigResource = DescribeConfigResponse['resources'][number]

/** KafkaJS's checks shared by both calls, in its order and with its messages. */
function checkResources(resources: unknown): asserts resources is Array<{ type: number; name: string }> {
  if (!resources || !Array.isArray(resources)) fail(`Invalid resources array ${resources}`)
  const list = resources as Array<{ type: number; name: string }>
  if (list.length === 0) fail('Resources array cannot be empty')
  const invalidType = list.find((r) => !RESOURCE_TYPES.includes(r.type))
  if (invalidType) fail(`Invalid resource type ${invalidType.type}: ${JSON.stringify(invalidType)}`)
  const invalidName = list.find((r) => !r.name || typeof r.name !== 'string')
  if (invalidName) fail(`Invalid resource name ${invalidName.name}: ${JSON.stringify(invalidName)}`)
}

const isTopic = (type: number) => type === ConfigResourceTypes.TOPIC

/**
 * Resolves like KafkaJS: `{ resources }` (no throttleTime, although its typings list one). Each topic reports its
 * stored entries plus retention.ms / retention.bytes from the columns; configNames narrows the list. An unknown
 * topic rejects with UNKNOWN_TOPIC_OR_PARTITION.
 */
export async function describeConfigs(
  ctx: PgQueueContext,
  req: { resources: ResourceConfigQuery[]; includeSynonyms?: boolean },
): Promise<DescribeConfigResponse> {
  const { resources, includeSynonyms = false } = req ?? ({} as typeof req)
  checkResources(resources)
  const invalidConfigs = resources.find((r) => !Array.isArray(r.configNames) && r.configNames != null)
  if (invalidConfigs) fail(`Invalid resource configNames ${invalidConfigs.configNames}: ${JSON.stringify(invalidConfigs)}`)

  const topics = await requireTopics(
    ctx,
    resources.filter((r) => isTopic(r.type)).map((r) => r.name),
  )
  const rows = new Map(topics.map((t) => [t.name, t]))
  const described: ConfigResource[] = resources.map((r) => {
    const row = isTopic(r.type) ? rows.get(r.name) : undefined
    const wanted = r.configNames && r.configNames.length > 0 ? new Set(r.configNames) : undefined
    const entries = row ? effectiveEntries(row, ctx.config.topicDefaults).filter((e) => !wanted || wanted.has(e.name)) : []
    return {
      errorCode: 0,
      errorMessage: null as unknown as string,
      resourceType: r.type,
      resourceName: r.name,
      configEntries: entries.map(({ name, value, explicit }) => {
        const configSource = explicit ? ConfigSource.TOPIC_CONFIG : ConfigSource.DEFAULT_CONFIG
        return {
          configName: name,
          configValue: value,
          readOnly: false,
          isDefault: !explicit,
          configSource,
          isSensitive: false,
          configSynonyms: includeSynonyms ? [{ configName: name, configValue: value, configSource }] : [],
        }
      }),
    }
  })
  return { resources: described } as DescribeConfigResponse
}

/**
 * Kafka's AlterConfigs replaces a topic's whole configuration: entries not given go back to their defaults (the
 * retention columns included). Every resource is checked first, then all topics change in one transaction.
 */
export async function alterConfigs(ctx: PgQueueContext, req: { validateOnly?: boolean; resources: IResourceConfig[] }): Promise<unknown> {
  const { resources, validateOnly = false } = req ?? ({} as typeof req)
  checkResources(resources)
  const invalidConfigs = resources.find((r) => !Array.isArray(r.configEntries))
  if (invalidConfigs) fail(`Invalid resource configEntries ${invalidConfigs.configEntries}: ${JSON.stringify(invalidConfigs)}`)
  const invalidValue = resources.find((r) => r.configEntries.some((e) => typeof e?.name !== 'string' || typeof e?.value !== 'string'))
  if (invalidValue) fail(`Invalid resource config value: ${JSON.stringify(invalidValue)}`)
  const other = resources.find((r) => !isTopic(r.type))
  if (other)
    return notSupported(
      'alterConfigs',
      `only TOPIC resources can be altered (got resource type ${other.type} "${other.name}"); configure the transport through DATAHUB_PGQUEUE_* settings`,
    )

  await requireTopics(
    ctx,
    resources.map((r) => r.name),
  )
  const changes: Array<[string, TopicSettings]> = resources.map((r) => [r.name, settingsFromEntries(r.configEntries, ctx.config.topicDefaults)])
  if (!validateOnly) {
    await transaction(ctx.db, async (client) => {
      const store = storeFor(ctx.db, client)
      for (const [name, settings] of changes) await store.topicConfig.replaceTopicSettings(name, settings)
    })
    ctx.topics.forget(changes.map(([name]) => name))
  }
  return {
    resources: resources.map((r) => ({ errorCode: 0, errorMessage: null, resourceType: r.type, resourceName: r.name })),
  }
}
