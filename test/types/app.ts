// A realistic KafkaJS application, type-checked (never run) twice without edits:
//   tsc -p test/types/tsconfig.json          'kafkajs-pgqueue' → our src/index.ts
//   tsc -p test/types/tsconfig.kafkajs.json  'kafkajs-pgqueue' → kafkajs's own declarations
// The second run proves this is plain KafkaJS code; the first that we accept it unchanged.
// The @ts-expect-error lines make the check fail if our types degrade to `any`.
import {
  AssignerProtocol,
  CompressionTypes,
  ConfigResourceTypes,
  Kafka,
  KafkaJSError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  PartitionAssigners,
  Partitioners,
  logLevel,
} from 'kafkajs-pgqueue'
import type {
  Admin,
  Consumer,
  ConsumerCrashEvent,
  ConsumerGroupJoinEvent,
  EachBatchPayload,
  EachMessagePayload,
  ICustomPartitioner,
  IHeaders,
  ITopicConfig,
  KafkaConfig,
  KafkaMessage,
  LogEntry,
  Logger,
  Message,
  Producer,
  ProducerRecord,
  RecordMetadata,
  RetryOptions,
  Transaction,
  logCreator,
} from 'kafkajs-pgqueue'

// ---- logging ----
const jsonLogCreator: logCreator =
  (level: logLevel) =>
  ({ namespace, label, log }: LogEntry) => {
    if (level === logLevel.NOTHING) return
    const { message, timestamp, ...extra } = log
    process.stdout.write(`${timestamp} ${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
  }

const retry: RetryOptions = { initialRetryTime: 100, retries: 8, restartOnFailure: async (e: Error) => !(e instanceof KafkaJSNonRetriableError) }

const config: KafkaConfig = {
  clientId: 'orders-service',
  brokers: ['localhost:9092'],
  logLevel: logLevel.WARN,
  logCreator: jsonLogCreator,
  retry,
  connectionTimeout: 3000,
  requestTimeout: 25000,
  ssl: false,
  sasl: { mechanism: 'plain', username: 'app', password: 'secret' },
}

const kafka = new Kafka(config)
const rootLogger: Logger = kafka.logger()
const log = rootLogger.namespace('orders')
log.info('starting', { pid: process.pid })
log.setLogLevel(logLevel.DEBUG)

// ---- producer ----
const modPartitioner: ICustomPartitioner =
  () =>
  ({ partitionMetadata, message }) =>
    message.key ? message.key.length % partitionMetadata.length : 0

const producer: Producer = kafka.producer({
  createPartitioner: Partitioners.DefaultPartitioner,
  allowAutoTopicCreation: false,
  idempotent: true,
  maxInFlightRequests: 1,
})
const txProducer = kafka.producer({ transactionalId: 'orders-tx', createPartitioner: modPartitioner, idempotent: true })

async function produce(): Promise<RecordMetadata[]> {
  await producer.connect()
  const headers: IHeaders = { traceparent: '00-abc', 'x-tags': ['a', Buffer.from('b')], optional: undefined }
  const messages: Message[] = [
    { key: 'order-1', value: JSON.stringify({ total: 3 }), headers },
    { key: Buffer.from('order-2'), value: null, partition: 1, timestamp: Date.now().toString() },
  ]
  const record: ProducerRecord = { topic: 'orders', messages, acks: -1, timeout: 30000, compression: CompressionTypes.GZIP }
  const sent = await producer.send(record)
  for (const meta of sent) log.debug('sent', { topic: meta.topicName, partition: meta.partition, offset: meta.baseOffset })
  await producer.sendBatch({
    topicMessages: [
      { topic: 'orders', messages: [{ value: 'a' }] },
      { topic: 'audit', messages: [{ value: Buffer.from('b') }] },
    ],
    compression: CompressionTypes.None,
  })
  producer.on(producer.events.CONNECT, (e) => log.info('connected', { at: e.timestamp }))
  const remove = producer.on(producer.events.DISCONNECT, () => undefined)
  remove()
  // @ts-expect-error messages is required
  await producer.send({ topic: 'orders' })
  // @ts-expect-error value is required on a message
  await producer.send({ topic: 'orders', messages: [{ key: 'k' }] })
  return sent
}

async function transactional(consumerGroupId: string): Promise<void> {
  await txProducer.connect()
  const tx: Transaction = await txProducer.transaction()
  try {
    await tx.send({ topic: 'orders-enriched', messages: [{ key: 'k', value: 'v' }] })
    await tx.sendOffsets({ consumerGroupId, topics: [{ topic: 'orders', partitions: [{ partition: 0, offset: '42' }] }] })
    if (tx.isActive()) await tx.commit()
  } catch (e) {
    await tx.abort()
    throw e
  }
}

// ---- consumer ----
const consumer: Consumer = kafka.consumer({
  groupId: 'orders-workers',
  sessionTimeout: 30000,
  heartbeatInterval: 3000,
  maxWaitTimeInMs: 100,
  readUncommitted: false,
  partitionAssigners: [PartitionAssigners.roundRobin],
  retry: { ...retry, restartOnFailure: async () => true },
})

function handle(message: KafkaMessage): void {
  const trace = message.headers?.traceparent
  const traceText = Array.isArray(trace) ? trace.map(String).join(',') : trace?.toString()
  const body = message.value ? (JSON.parse(message.value.toString('utf8')) as unknown) : null
  log.debug('message', { offset: message.offset, ts: Number(message.timestamp), key: message.key?.toString(), traceText, body })
}

async function consume(): Promise<void> {
  await consumer.connect()
  await consumer.subscribe({ topics: ['orders', /^audit-.*/], fromBeginning: true })
  await consumer.subscribe({ topic: 'single', fromBeginning: false })

  consumer.on(consumer.events.GROUP_JOIN, (e: ConsumerGroupJoinEvent) => {
    const { memberAssignment, isLeader, duration } = e.payload
    log.info('joined', { topics: Object.keys(memberAssignment), isLeader, duration })
  })
  consumer.on(consumer.events.CRASH, async (e: ConsumerCrashEvent) => {
    log.error('crashed', { error: e.payload.error.message, restart: e.payload.restart })
  })
  consumer.on(consumer.events.END_BATCH_PROCESS, (e) => log.debug('batch', { lag: e.payload.offsetLag }))
  // @ts-expect-error unknown event names are rejected by the types too
  consumer.on('consumer.nope', () => undefined)

  await consumer.run({
    partitionsConsumedConcurrently: 4,
    autoCommitInterval: 5000,
    autoCommitThreshold: 100,
    eachMessage: async ({ topic, partition, message, heartbeat, pause }: EachMessagePayload) => {
      handle(message)
      if (topic === 'slow' && partition === 0) {
        const resume = pause()
        setTimeout(resume, 1000)
        throw new Error('try again later')
      }
      await heartbeat()
    },
  })

  await consumer.run({
    eachBatchAutoResolve: false,
    eachBatch: async ({
      batch,
      resolveOffset,
      heartbeat,
      commitOffsetsIfNecessary,
      uncommittedOffsets,
      isRunning,
      isStale,
      pause,
    }: EachBatchPayload) => {
      for (const message of batch.messages) {
        if (!isRunning() || isStale()) break
        handle(message)
        resolveOffset(message.offset)
        await heartbeat()
      }
      const lag: string = batch.offsetLag()
      log.debug('lag', { lag, low: batch.offsetLagLow(), first: batch.firstOffset(), last: batch.lastOffset(), hw: batch.highWatermark })
      await commitOffsetsIfNecessary(uncommittedOffsets())
      if (batch.isEmpty()) pause()
    },
  })

  consumer.seek({ topic: 'orders', partition: 0, offset: '0' })
  consumer.pause([{ topic: 'orders', partitions: [1] }])
  const paused: Array<{ topic: string; partitions: number[] }> = consumer.paused()
  consumer.resume(paused)
  await consumer.commitOffsets([{ topic: 'orders', partition: 0, offset: '10', metadata: null }])
  const group = await consumer.describeGroup()
  for (const member of group.members) {
    const assignment = AssignerProtocol.MemberAssignment.decode(member.memberAssignment)
    log.info('member', { id: member.memberId, topics: assignment ? Object.keys(assignment.assignment) : [] })
  }
  await consumer.stop()
  await consumer.disconnect()
}

// ---- admin ----
async function administer(): Promise<void> {
  const admin: Admin = kafka.admin({ retry })
  await admin.connect()
  const topics: ITopicConfig[] = [
    { topic: 'orders', numPartitions: 8, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '604800000' }] },
  ]
  const created: boolean = await admin.createTopics({ topics, waitForLeaders: true, timeout: 5000 })
  const names: string[] = await admin.listTopics()
  const { topics: metadata } = await admin.fetchTopicMetadata({ topics: ['orders'] })
  const partitionCount = metadata[0]?.partitions.length ?? 0
  const offsets = await admin.fetchTopicOffsets('orders')
  const highs = offsets.map(({ partition, high, low }) => `${partition}:${low}-${high}`)
  const byTime = await admin.fetchTopicOffsetsByTimestamp('orders', Date.now() - 60_000)
  const committed = await admin.fetchOffsets({ groupId: 'orders-workers', topics: ['orders'], resolveOffsets: true })
  for (const { topic, partitions } of committed) for (const p of partitions) log.info('committed', { topic, p: p.partition, o: p.offset })
  await admin.setOffsets({ groupId: 'orders-workers', topic: 'orders', partitions: [{ partition: 0, offset: '5' }] })
  await admin.resetOffsets({ groupId: 'orders-workers', topic: 'orders', earliest: true })
  await admin.createPartitions({ topicPartitions: [{ topic: 'orders', count: 16 }] })
  const { groups } = await admin.listGroups()
  const described = await admin.describeGroups(groups.map((g) => g.groupId))
  const deleted = await admin.deleteGroups(['old-group'])
  const cluster = await admin.describeCluster()
  const configs = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'orders' }] })
  await admin.deleteTopicRecords({ topic: 'orders', partitions: [{ partition: 0, offset: '-1' }] })
  await admin.deleteTopics({ topics: ['tmp'], timeout: 5000 })
  admin.on(admin.events.CONNECT, () => undefined)
  log.info('admin', {
    created,
    names,
    partitionCount,
    highs,
    byTime,
    described: described.groups.length,
    deleted,
    cluster,
    configs: configs.resources.length,
  })
  await admin.disconnect()
}

// ---- error handling ----
async function main(): Promise<void> {
  try {
    await produce()
    await transactional('orders-workers')
    await consume()
    await administer()
  } catch (e) {
    if (e instanceof KafkaJSNumberOfRetriesExceeded) log.error('gave up', { retryCount: e.retryCount, retryTime: e.retryTime })
    else if (e instanceof KafkaJSProtocolError && e.type === 'UNKNOWN_TOPIC_OR_PARTITION') log.warn('no topic', { code: e.code })
    else if (e instanceof KafkaJSError) log.error(e.message, { retriable: e.retriable, name: e.name })
    const asError: KafkaJSError = new KafkaJSNonRetriableError('wrapped')
    throw asError
  } finally {
    await Promise.allSettled([producer.disconnect(), txProducer.disconnect(), consumer.disconnect()])
  }
}

export { main }
