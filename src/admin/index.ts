import type { Admin, AdminConfig, Logger } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { classifyPgError, sqlState, toKafkaJSError } from '../db/pgErrors.js'
import { KafkaJSAggregateError, KafkaJSError, KafkaJSRequestTimeoutError } from '../kafkajs/errors.js'
import { adminEvents, createInstrumentationEmitter } from '../kafkajs/instrumentation.js'
import { createNetworkInstrumentation, type ApiName } from '../kafkajs/networkEvents.js'
import { createRetrier } from '../kafkajs/retry.js'
import { alterConfigs, describeConfigs } from './configs.js'
import { notSupported } from './errors.js'
import {
  validateAlterPartitionReassignments,
  validateCreateAcls,
  validateDeleteAcls,
  validateDescribeAcls,
  validateListPartitionReassignments,
} from './unsupportedValidation.js'
import { deleteGroups, describeGroups, listGroups } from './groups.js'
import { describeCluster, fetchTopicMetadata, listTopics } from './metadata.js'
import { fetchOffsets, fetchTopicOffsets, fetchTopicOffsetsByTimestamp, resetOffsets, setOffsets } from './offsets.js'
import { deleteTopicRecords } from './records.js'
import { createPartitions, createTopics, deleteTopics } from './topics.js'

const NO_ACLS = 'there are no Kafka ACLs; grant PostgreSQL privileges on the queue schema instead'
const NO_REPLICAS = 'every partition lives in the one PostgreSQL database, there are no replicas to reassign'

/** A call PostgreSQL cannot serve: KafkaJS's argument errors first, then KafkaJSNotImplemented saying why. */
const refuse =
  (validate: (request: unknown) => void, method: string, why: string) =>
  (request?: unknown): Promise<never> => {
    try {
      validate(request)
    } catch (e) {
      return Promise.reject(e as Error)
    }
    return notSupported(method, why)
  }

/**
 * KafkaJS's Admin on the pgQueue tables. Every call shares the Kafka instance's pool (opened by `connect`).
 * Lost connections and transient conflicts (serialization failures, deadlocks) are retried with the admin's
 * `retry` options, as KafkaJS retries broker requests; everything else rejects at once.
 */
export function createAdmin(ctx: PgQueueContext, rootLogger: Logger, config: AdminConfig = {}, clientId = 'kafkajs'): Admin {
  const logger = rootLogger.namespace('Admin')
  const emitter = createInstrumentationEmitter(adminEvents, { logger, clientName: 'admin' })
  const network = createNetworkInstrumentation(emitter, clientId, () => ctx.endpoint)
  const retrier = createRetrier(config.retry)
  let acquired: Promise<boolean> | undefined

  // KafkaJS's admin connects its cluster on demand, so every call works before (or without) connect()
  const ensureConnected = async () => {
    acquired ??= ctx
      .connectClient((probe) => network.as('ApiVersions', probe))
      .then(
        () => true,
        (e: unknown) => {
          acquired = undefined
          throw toKafkaJSError(e, 'connect')
        },
      )
    await acquired
  }

  // KafkaJS's createTopics, deleteTopics and createPartitions retry only NOT_CONTROLLER: a request that timed out
  // rejects at once with KafkaJSRequestTimeoutError (its spec "emits the request timeout event" relies on it)
  const bailsOnTimeout = new Set<ApiName>(['CreateTopics', 'DeleteTopics', 'CreatePartitions'])
  const call = <T>(op: string, fn: () => Promise<T>, apiName: ApiName = 'Metadata'): Promise<T> =>
    retrier<T>(async (bail) => {
      try {
        await ensureConnected()
        return await network.as(apiName, fn)
      } catch (e) {
        const ours = e instanceof KafkaJSError || e instanceof KafkaJSAggregateError
        if (!ours && classifyPgError(e) !== 'fatal') {
          const err = toKafkaJSError(e, `admin.${op}`)
          if (err instanceof KafkaJSRequestTimeoutError && bailsOnTimeout.has(apiName)) bail(err)
          throw err
        }
        // database errors become KafkaJS errors; our own and programming errors pass unchanged
        bail(ours || !sqlState(e) ? e : toKafkaJSError(e, `admin.${op}`))
        return undefined as T
      }
    })

  const admin: Admin = {
    connect: async () => {
      await ensureConnected()
      emitter.emit(adminEvents.CONNECT)
    },
    disconnect: async () => {
      const held = acquired
      acquired = undefined
      if (held && (await held.catch(() => false))) await ctx.release()
      emitter.emit(adminEvents.DISCONNECT)
    },
    listTopics: () => call('listTopics', () => listTopics(ctx)),
    createTopics: (req) => call('createTopics', () => createTopics(ctx, req), 'CreateTopics'),
    deleteTopics: (req) => call('deleteTopics', () => deleteTopics(ctx, req), 'DeleteTopics'),
    createPartitions: (req) => call('createPartitions', () => createPartitions(ctx, req), 'CreatePartitions'),
    fetchTopicMetadata: (req) => call('fetchTopicMetadata', () => fetchTopicMetadata(ctx, req)),
    fetchTopicOffsets: (topic) => call('fetchTopicOffsets', () => fetchTopicOffsets(ctx, topic), 'ListOffsets'),
    fetchTopicOffsetsByTimestamp: (topic, timestamp) =>
      call('fetchTopicOffsetsByTimestamp', () => fetchTopicOffsetsByTimestamp(ctx, topic, timestamp), 'ListOffsets'),
    fetchOffsets: (req) => call('fetchOffsets', () => fetchOffsets(ctx, logger, req), 'OffsetFetch'),
    setOffsets: (req) => call('setOffsets', () => setOffsets(ctx, logger, req), 'OffsetCommit'),
    resetOffsets: (req) => call('resetOffsets', () => resetOffsets(ctx, logger, req), 'OffsetCommit'),
    describeCluster: () => call('describeCluster', () => describeCluster(ctx)),
    describeConfigs: (req) => call('describeConfigs', () => describeConfigs(ctx, req), 'DescribeConfigs'),
    alterConfigs: (req) => call('alterConfigs', () => alterConfigs(ctx, req), 'AlterConfigs'),
    listGroups: () => call('listGroups', () => listGroups(ctx), 'ListGroups'),
    describeGroups: (ids) => call('describeGroups', () => describeGroups(ctx, ids), 'DescribeGroups'),
    deleteGroups: (ids) => call('deleteGroups', () => deleteGroups(ctx, ids), 'DeleteGroups'),
    deleteTopicRecords: (req) => call('deleteTopicRecords', () => deleteTopicRecords(ctx, logger, req), 'DeleteRecords'),
    createAcls: refuse(validateCreateAcls, 'createAcls', NO_ACLS),
    describeAcls: refuse(validateDescribeAcls, 'describeAcls', NO_ACLS),
    deleteAcls: refuse(validateDeleteAcls, 'deleteAcls', NO_ACLS),
    alterPartitionReassignments: refuse(validateAlterPartitionReassignments, 'alterPartitionReassignments', NO_REPLICAS),
    listPartitionReassignments: refuse(validateListPartitionReassignments, 'listPartitionReassignments', NO_REPLICAS),
    logger: () => logger,
    on: ((eventName: string, listener: (event: never) => void) => emitter.on(eventName, listener as never)) as Admin['on'],
    events: adminEvents,
  }
  return admin
}
