// createTopics / deleteTopics / createPartitions with KafkaJS's argument checks and Kafka's per-topic results:
// each topic succeeds or fails on its own, failures come back the way KafkaJS surfaces the broker's answer.
import type { ITopicConfig, ITopicPartitionConfig } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { newTopicFromDefaults } from '../client/topicDefaults.js'
import { KafkaJSAggregateError, KafkaJSCreateTopicError } from '../kafkajs/errors.js'
import { validateTopicName } from '../kafkajs/messageValidation.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import { type NewTopic } from '../store/topics.js'
import { createTopicError, fail } from './errors.js'
import { settingsFromEntries } from './topicSettings.js'
import { NODE_ID } from './metadata.js'

const MAX_PARTITIONS = 4096

export interface CreateTopicsRequest {
  topics: ITopicConfig[]
  validateOnly?: boolean
  waitForLeaders?: boolean
  timeout?: number
}

/** KafkaJS's client-side checks, same order and messages. */
function checkTopicConfigs(topics: unknown): asserts topics is ITopicConfig[] {
  if (!topics || !Array.isArray(topics)) fail(`Invalid topics array ${topics}`)
  const list = topics as ITopicConfig[]
  if (list.some((t) => typeof t?.topic !== 'string')) fail('Invalid topics array, the topic names have to be a valid string')
  if (new Set(list.map((t) => t.topic)).size < list.length) {
    fail('Invalid topics array, it cannot have multiple entries for the same topic')
  }
  for (const { topic, configEntries } of list) {
    if (configEntries == null) continue
    if (!Array.isArray(configEntries)) fail(`Invalid configEntries for topic "${topic}", must be an array`)
    configEntries.forEach((entry: unknown, index) => {
      if (typeof entry !== 'object' || entry == null) fail(`Invalid configEntries for topic "${topic}". Entry ${index} must be an object`)
      for (const prop of ['name', 'value'] as const) {
        if (!Object.prototype.hasOwnProperty.call(entry, prop) || typeof (entry as Record<string, unknown>)[prop] !== 'string') {
          fail(`Invalid configEntries for topic "${topic}". Entry ${index} must have a valid "${prop}" property`)
        }
      }
    })
  }
}

type Planned = { ok: true; topic: NewTopic } | { ok: false; error: ReturnType<typeof createTopicError> }

/** What the broker would decide for one topic before looking at existing topics. */
function plan(ctx: PgQueueContext, t: ITopicConfig): Planned {
  try {
    validateTopicName(t.topic)
  } catch (e) {
    return { ok: false, error: createTopicError(t.topic, 'INVALID_TOPIC_EXCEPTION', (e as Error).message) }
  }
  // -1 (or nothing) = the broker default; a replica assignment fixes the count, as in Kafka
  let count = t.numPartitions ?? -1
  if (count === -1 && Array.isArray(t.replicaAssignment) && t.replicaAssignment.length > 0) count = t.replicaAssignment.length
  if (count === -1) count = ctx.config.topicDefaults.partitionCount
  if (!Number.isInteger(count) || count < 1 || count > MAX_PARTITIONS) {
    return { ok: false, error: createTopicError(t.topic, 'INVALID_PARTITIONS', `${String(count)} (must be 1 to ${MAX_PARTITIONS})`) }
  }
  try {
    const settings = settingsFromEntries(t.configEntries, ctx.config.topicDefaults)
    return { ok: true, topic: { ...newTopicFromDefaults(ctx, t.topic, count), ...settings } }
  } catch (e) {
    return { ok: false, error: new KafkaJSCreateTopicError(e as Error, t.topic) } // INVALID_CONFIG
  }
}

/**
 * true when every topic was created. As with KafkaJS, false when the only failures were TOPIC_ALREADY_EXISTS
 * (even if some other topics of the call were created); any other failure rejects with a KafkaJSAggregateError of
 * KafkaJSCreateTopicError, sorted by topic name. waitForLeaders / timeout / replicationFactor have nothing to wait
 * for or place here.
 */
export async function createTopics(ctx: PgQueueContext, req: CreateTopicsRequest): Promise<boolean> {
  const { topics, validateOnly = false } = req ?? ({} as CreateTopicsRequest)
  checkTopicConfigs(topics)
  const planned = topics.map((t) => plan(ctx, t))
  const errors = planned.flatMap((p) => (p.ok ? [] : [p.error]))
  const candidates = planned.flatMap((p) => (p.ok ? [p.topic] : []))
  let existing: string[] = []
  if (candidates.length > 0) {
    const names = candidates.map((c) => c.name)
    if (validateOnly) {
      existing = (await ctx.store.topics.findTopics(names)).map((r) => r.name)
    } else {
      const created = new Set(await ctx.store.topics.insertTopics(candidates))
      ctx.topics.forget(names)
      existing = names.filter((n) => !created.has(n))
    }
  }
  errors.push(...existing.map((name) => createTopicError(name, 'TOPIC_ALREADY_EXISTS')))
  if (errors.length === 0) return true
  if (errors.every((e) => e.type === 'TOPIC_ALREADY_EXISTS')) return false
  errors.sort((a, b) => a.topic.localeCompare(b.topic))
  throw new KafkaJSAggregateError('Topic creation errors', errors)
}

/** Deletes the topics that exist (with their messages, offsets and leases); any unknown name then rejects. */
export async function deleteTopics(ctx: PgQueueContext, req: { topics: string[]; timeout?: number }): Promise<void> {
  const topics = req?.topics
  if (!topics || !Array.isArray(topics)) fail(`Invalid topics array ${topics}`)
  if (topics.some((t) => typeof t !== 'string')) fail('Invalid topics array, the names must be a valid string')
  if (topics.length === 0) return
  const deleted = new Set(await ctx.store.topics.deleteTopics(topics))
  ctx.topics.forget(topics)
  if (topics.some((t) => !deleted.has(t))) throw protocolError('UNKNOWN_TOPIC_OR_PARTITION')
}

export interface CreatePartitionsRequest {
  topicPartitions: ITopicPartitionConfig[]
  validateOnly?: boolean
  timeout?: number
}

/**
 * Grows partition counts. Like KafkaJS, resolves with undefined (its typings say boolean) and rejects with the
 * first failing topic's protocol error (by name): INVALID_PARTITIONS when the count does not grow or exceeds 4096,
 * UNKNOWN_TOPIC_OR_PARTITION for an unknown topic. Topics without an error are grown regardless.
 */
/**
 * Kafka's check of createPartitions' assignments: one per new partition, each a non-empty list of distinct brokers
 * that exist. This transport's one broker is NODE_ID (describeCluster), so [NODE_ID] is the only valid list.
 */
function validAssignments(assignments: unknown, added: number): boolean {
  return (
    Array.isArray(assignments) &&
    assignments.length === added &&
    assignments.every((a) => Array.isArray(a) && a.length > 0 && new Set(a).size === a.length && a.every((b) => b === NODE_ID))
  )
}

export async function createPartitions(ctx: PgQueueContext, req: CreatePartitionsRequest): Promise<boolean> {
  const { topicPartitions, validateOnly = false } = req ?? ({} as CreatePartitionsRequest)
  if (!topicPartitions || !Array.isArray(topicPartitions)) fail(`Invalid topic partitions array ${topicPartitions}`)
  if (topicPartitions.length === 0) fail('Empty topic partitions array')
  if (topicPartitions.some((t) => typeof t?.topic !== 'string')) {
    fail('Invalid topic partitions array, the topic names have to be a valid string')
  }
  if (new Set(topicPartitions.map((t) => t.topic)).size < topicPartitions.length) {
    fail('Invalid topic partitions array, it cannot have multiple entries for the same topic')
  }
  const rows = new Map((await ctx.store.topics.findTopics(topicPartitions.map((t) => t.topic))).map((r) => [r.name, r]))
  const failures: Array<{ topic: string; error: Error }> = []
  for (const { topic, count, assignments } of [...topicPartitions].sort((a, b) => a.topic.localeCompare(b.topic))) {
    const row = rows.get(topic)
    if (!row) {
      failures.push({ topic, error: protocolError('UNKNOWN_TOPIC_OR_PARTITION') })
    } else if (!Number.isInteger(count) || count <= row.partitionCount || count > MAX_PARTITIONS) {
      failures.push({ topic, error: protocolError('INVALID_PARTITIONS') })
    } else if (assignments !== undefined && !validAssignments(assignments, count - row.partitionCount)) {
      failures.push({ topic, error: protocolError('INVALID_REPLICA_ASSIGNMENT') })
    } else if (!validateOnly && !(await ctx.store.topics.growPartitions(topic, count))) {
      failures.push({ topic, error: protocolError('INVALID_PARTITIONS') }) // grown concurrently past `count`
    }
  }
  ctx.topics.forget(topicPartitions.map((t) => t.topic))
  if (failures.length > 0) throw failures[0]!.error
  return undefined as unknown as boolean
}
