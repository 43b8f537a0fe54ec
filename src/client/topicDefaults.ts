import { validateTopicName } from '../kafkajs/messageValidation.js'
import type { NewTopic } from '../store/topics.js'
import type { PgQueueContext } from './context.js'

/** A topic created on first use (producer, consumer) or by createTopics without settings: the configured defaults. */
export function newTopicFromDefaults(ctx: PgQueueContext, name: string, numPartitions?: number): NewTopic {
  validateTopicName(name)
  const d = ctx.config.topicDefaults
  return {
    name,
    partitionCount: numPartitions && numPartitions > 0 ? numPartitions : d.partitionCount,
    retentionMaxAgeSeconds: d.retentionMaxAgeSeconds,
    maxRowsPerTopic: d.maxRowsPerTopic,
    maxTotalPayloadBytes: d.maxTotalPayloadBytes,
    aggressiveRetention: d.aggressiveRetention,
    config: {},
    contentTypeMime: d.contentTypeMime,
  }
}
