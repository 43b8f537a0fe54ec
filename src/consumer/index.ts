import type {
  Consumer,
  ConsumerConfig,
  ConsumerRunConfig,
  ConsumerSubscribeTopics,
  ConsumerSubscribeTopic,
  Logger,
  TopicPartitionOffsetAndMetadata,
} from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { registerLocalMember } from '../client/groupMembers.js'
import { newTopicFromDefaults } from '../client/topicDefaults.js'
import { describeGroup } from '../client/groupDescription.js'
import { toKafkaJSError } from '../db/pgErrors.js'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { consumerEvents, createInstrumentationEmitter } from '../kafkajs/instrumentation.js'
import { createNetworkInstrumentation } from '../kafkajs/networkEvents.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import { validateTopicName } from '../kafkajs/messageValidation.js'
import { validateOffsetEntry } from '../kafkajs/offsetValidation.js'
import { consumerRegistryFor } from '../ops/consumerRegistry.js'
import { OBSERVE_BATCHES, type BatchObservable, type BatchObserver } from '../ops/hooks.js'
import { traceEachBatch, traceEachMessage } from '../tracing/messaging.js'
import { GroupMembership, type Subscription } from './groupMembership.js'
import { PauseRegistry } from './pauseRegistry.js'
import { assignerCluster, createAssigners } from './assigners.js'
import { isRetriableCrash } from './crashCause.js'
import { FetchManager } from './fetchManager.js'
import { OffsetManager } from './offsetManager.js'
import { Runner } from './runner.js'
import { storeFetchSource, storeOffsetWriter } from './storePorts.js'
import { validateConsumerConfig, validatePauseEntries } from './validation.js'

const NOT_RUNNING = 'Consumer group was not initialized, consumer#run must be called first'

export function createConsumer(ctx: PgQueueContext, rootLogger: Logger, clientId: string, config: ConsumerConfig): Consumer {
  const settings = validateConsumerConfig(config)
  const { groupId } = settings
  const logger = rootLogger.namespace('Consumer')
  if (config.readUncommitted) {
    // PostgreSQL shows no session another's uncommitted rows, and aborted transactions leave no rows: say so once
    logger.warn('readUncommitted has no effect on PostgreSQL: only committed messages are delivered, never those of open or aborted transactions', {
      groupId,
    })
  }
  const emitter = createInstrumentationEmitter(consumerEvents, { logger, clientName: 'consumer' })
  const network = createNetworkInstrumentation(emitter, clientId, () => ctx.endpoint)
  const subscriptions = new Map<string, Subscription>()
  const paused = new PauseRegistry()
  const observers = new Set<BatchObserver>()
  let connected = false
  let runner: Runner | undefined
  let offsetManager: OffsetManager | undefined
  let membership: GroupMembership | undefined
  let restartTimer: NodeJS.Timeout | undefined
  // between run() and the group being set up: KafkaJS has its group object at once, so seek/pause/resume work then
  let starting = false
  const earlySeeks = new Map<string, string>()
  let unregister: (() => void) | undefined

  const start = async (run: ConsumerRunConfig): Promise<void> => {
    const names = [...subscriptions.keys()]
    const autoCreate = settings.allowAutoTopicCreation ? (name: string) => newTopicFromDefaults(ctx, name) : undefined
    const found = await ctx.topics.get(ctx.db, names, autoCreate)
    if (found.size < names.length) throw protocolError('UNKNOWN_TOPIC_OR_PARTITION')
    const cluster = assignerCluster(() => m.partitionCounts)
    const m: GroupMembership = new GroupMembership({
      ctx,
      groupId,
      clientId,
      sessionTimeout: settings.sessionTimeout,
      heartbeatInterval: settings.heartbeatInterval,
      metadataMaxAge: settings.metadataMaxAge,
      subscriptions,
      assigners: createAssigners(config.partitionAssigners, { cluster, groupId, logger }),
      emitter,
      network,
      logger,
      beforeRevoke: (states) => offsets.commitIfAuto(states),
      resetStart: (topicId, partition, offset) => offsets.commitReset(topicId, partition, offset),
    })
    for (const [key, target] of earlySeeks) m.pendingSeeks.set(key, target)
    earlySeeks.clear()
    const autoCommit = run.autoCommit ?? true
    const autoCommitInterval = run.autoCommitInterval ?? null
    const autoCommitThreshold = run.autoCommitThreshold ?? null
    const offsets: OffsetManager = new OffsetManager({
      writer: storeOffsetWriter(ctx, groupId, m, network),
      owner: m,
      groupId,
      autoCommit,
      autoCommitInterval,
      autoCommitThreshold,
      emitter,
      logger,
    })
    const fetcher = new FetchManager({
      source: storeFetchSource(ctx, groupId, m, network),
      offsets,
      emitter,
      logger,
      groupId,
      bands: ctx.config.priorityBands,
      perBatch: ctx.config.consumerPoll.maxBatchMessages,
      maxBytesPerPartition: settings.maxBytesPerPartition,
      maxBytes: settings.maxBytes,
      fromBeginning: (topic) => m.fromBeginning(topic),
      onFenced: () => m.markChanged(),
    })
    const r: Runner = new Runner({
      ctx,
      membership: m,
      fetcher,
      offsets,
      paused,
      emitter,
      logger,
      groupId,
      // each handled message gets a span (no-op unless the app registered an OpenTelemetry SDK)
      eachMessage: run.eachMessage && traceEachMessage(run.eachMessage, groupId),
      eachBatch: run.eachBatch && traceEachBatch(run.eachBatch, groupId),
      eachBatchAutoResolve: run.eachBatchAutoResolve ?? true,
      autoCommit,
      autoCommitInterval,
      autoCommitThreshold,
      // DataHub's per-topic consumer concurrency is the default for KafkaJS's partitionsConsumedConcurrently
      concurrency: Math.max(1, run.partitionsConsumedConcurrently ?? ctx.config.topicDefaults.consumerConcurrency),
      maxWaitTimeInMs: settings.maxWaitTimeInMs,
      retry: settings.retry,
      onCrash: (e) => void onCrash(e, run),
      observers,
    })
    membership = m
    unregister = registerLocalMember(ctx, m)
    offsetManager = offsets
    runner = r
    logger.info('Starting', { groupId })
    await r.start()
  }

  const onCrash = async (e: Error, run: ConsumerRunConfig) => {
    logger.error(`Crash: ${e.name}: ${e.message}`, { groupId, retryCount: (e as { retryCount?: number }).retryCount })
    await stopRunner().catch(() => undefined)
    const retriable = isRetriableCrash(e)
    let restart = retriable
    if (retriable && settings.retry.restartOnFailure) {
      restart = await settings.retry.restartOnFailure(e).catch((err: Error) => {
        logger.error('Caught error when invoking user-provided "restartOnFailure" callback. Defaulting to restarting.', {
          error: err.message,
          groupId,
        })
        return true
      })
    }
    emitter.emit(consumerEvents.CRASH, { error: e, groupId, restart })
    if (restart && connected) {
      const retryTime = (e as { retryTime?: number }).retryTime ?? settings.retry.initialRetryTime ?? 300
      logger.error(`Restarting the consumer in ${retryTime}ms`, { groupId })
      restartTimer = setTimeout(() => {
        restartTimer = undefined
        start(run).catch((err) => void onCrash(toKafkaJSError(err, 'restart'), run))
      }, retryTime)
    }
  }

  // a stop in progress (e.g. consumer.stop() called, not awaited, from eachMessage): a later stop or disconnect waits
  // for it, so the pool is not released under its leave()
  let stopping: Promise<void> | undefined
  const stopRunner = async (): Promise<void> => {
    if (stopping) return stopping
    stopping = stopRunnerNow().finally(() => (stopping = undefined))
    return stopping
  }
  const stopRunnerNow = async () => {
    clearTimeout(restartTimer)
    restartTimer = undefined
    const r = runner
    const leave = unregister
    unregister = undefined
    runner = undefined
    offsetManager = undefined
    membership = undefined
    // still registered while the batch in flight finishes: a transaction.sendOffsets it makes (a dead-letter move,
    // a consume-transform-produce commit) must find the member, to be fenced and translated per priority; found
    // gone, it was written unfenced as a plain offset, passing messages of other priorities not handed out yet
    try {
      await r?.stop()
    } finally {
      leave?.()
    }
  }

  const requireRunning = () => {
    if (!runner || !membership || !offsetManager) throw new KafkaJSNonRetriableError(NOT_RUNNING)
    return { runner, membership, offsets: offsetManager }
  }

  const consumer: Consumer & BatchObservable = {
    connect: async () => {
      if (connected) return
      try {
        await ctx.connectClient((probe) => network.as('ApiVersions', probe))
      } catch (e) {
        throw toKafkaJSError(e, 'connect')
      }
      connected = true
      emitter.emit(consumerEvents.CONNECT)
    },
    disconnect: async () => {
      await consumer.stop()
      if (!connected) return
      connected = false
      await ctx.release()
      emitter.emit(consumerEvents.DISCONNECT)
    },
    subscribe: async (subscription: ConsumerSubscribeTopics | ConsumerSubscribeTopic) => {
      if (runner) throw new KafkaJSNonRetriableError('Cannot subscribe to topic while consumer is running')
      const s = subscription as Partial<ConsumerSubscribeTopics & ConsumerSubscribeTopic>
      if (!s || (!s.topic && !s.topics)) throw new KafkaJSNonRetriableError('Missing required argument "topics"')
      if (s.topics !== undefined && !Array.isArray(s.topics)) throw new KafkaJSNonRetriableError('Argument "topics" must be an array')
      const wanted = s.topics ?? [s.topic!]
      for (const t of wanted) {
        if (typeof t !== 'string' && !(t instanceof RegExp)) {
          throw new KafkaJSNonRetriableError(`Invalid topic ${t} (${typeof t}), the topic name has to be a String or a RegExp`)
        }
        if (typeof t === 'string') validateTopicName(t)
      }
      // a RegExp matches the topics that exist now, as in KafkaJS
      const existing = wanted.some((t) => t instanceof RegExp) ? (await ctx.store.topics.listTopics()).map((r) => r.name) : []
      for (const t of wanted) {
        const names = t instanceof RegExp ? existing.filter((name) => t.test(name)) : [t]
        for (const name of names) subscriptions.set(name, { fromBeginning: s.fromBeginning ?? false })
      }
    },
    run: async (run: ConsumerRunConfig = {}) => {
      if (runner) {
        logger.warn('consumer#run was called, but the consumer is already running', { groupId })
        return
      }
      if (!connected) throw new KafkaJSNonRetriableError('Consumer is not connected: call connect() first')
      starting = true
      try {
        await start(run)
      } catch (e) {
        await stopRunner().catch(() => undefined)
        throw toKafkaJSError(e, 'run')
      } finally {
        starting = false
      }
    },
    stop: async () => {
      const wasRunning = runner !== undefined || restartTimer !== undefined
      await stopRunner()
      if (wasRunning) {
        logger.info('Stopped', { groupId })
        emitter.emit(consumerEvents.STOP)
      }
    },
    commitOffsets: async (offsets: TopicPartitionOffsetAndMetadata[] = []) => {
      offsets.forEach((o) => validateOffsetEntry(o, { allowSpecial: false, checkMetadata: true }))
      const { offsets: manager } = requireRunning()
      const byTopic = new Map<string, Array<{ partition: number; offset: string; metadata?: string | null }>>()
      for (const o of offsets) {
        const list = byTopic.get(o.topic) ?? byTopic.set(o.topic, []).get(o.topic)!
        list.push({ partition: Number(o.partition), offset: BigInt(o.offset).toString(), metadata: o.metadata ?? null })
      }
      await manager.commitExplicit([...byTopic].map(([topic, partitions]) => ({ topic, partitions })))
    },
    seek: ({ topic, partition, offset }) => {
      validateOffsetEntry({ topic, partition, offset }, { allowSpecial: true, checkMetadata: false })
      const key = `${topic}:${Number(partition)}`
      const target = BigInt(offset).toString()
      if (starting && !membership) {
        earlySeeks.set(key, target)
        return
      }
      const { runner: r, membership: m } = requireRunning()
      const state = m.partitions.get(key)
      if (state) state.pendingSeek = BigInt(target)
      else m.pendingSeeks.set(key, target)
      r.poke()
    },
    pause: (topics) => {
      validatePauseEntries(topics, 'pause')
      if (!starting) requireRunning()
      paused.pause(topics)
    },
    resume: (topics) => {
      validatePauseEntries(topics, 'resume')
      if (!starting) requireRunning()
      paused.resume(topics)
      runner?.poke()
    },
    paused: () => paused.list([...(membership?.partitions.values() ?? [])]),
    describeGroup: () => describeGroup(ctx, groupId),
    events: consumerEvents,
    on: (eventName, listener) => emitter.on(eventName, listener as never),
    logger: () => logger,
    [OBSERVE_BATCHES]: (observer: BatchObserver) => {
      observers.add(observer)
      return () => observers.delete(observer)
    },
  }
  // the health check follows every consumer of this Kafka (ops/health.ts)
  consumerRegistryFor(ctx).track(consumer, groupId)
  return consumer
}
