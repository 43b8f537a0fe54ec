// What the orchestrator tells each worker process (JSON in TORTURE_SPEC), and the operation menus a run may draw
// from. The CI mix is a subset of these (see options.ts).
export type Transport = 'pgqueue' | 'kafka'

/** The consumers' heartbeat interval for a session timeout (the checker's concurrency excuse depends on it). */
export const heartbeatIntervalFor = (sessionTimeoutMs: number): number => Math.max(100, Math.floor(sessionTimeoutMs / 10))

export const PRODUCER_OPS = ['send', 'batch', 'idempotent', 'txn', 'outbox-rc', 'outbox-rr', 'outbox-ser'] as const
export type ProducerOp = (typeof PRODUCER_OPS)[number]

export const HANDLERS = ['message', 'message-manual', 'batch', 'batch-partial'] as const
export type Handler = (typeof HANDLERS)[number]

export const CONSUMER_OPS = ['pause', 'seek', 'restart', 'rejoin'] as const
export type ConsumerOp = (typeof CONSUMER_OPS)[number]

export interface TopicPlan {
  name: string
  partitions: number
  /** a row cap may delete messages nobody consumed: no loss / gap / commit checks */
  lossy?: boolean
  /** pgQueue: retention waits for every registered group */
  aggressive?: boolean
  /** some of its messages are poison: their handler fails every time (workers of the dead-letter group) */
  poison?: boolean
}

/** A consumer's handler wrapped by the public deadLetter API: poison messages end on `topic`, the rest are handled. */
export interface DeadLetterPlan {
  topic: string
  maxAttempts: number
  /** drawn per run for the group: in place, or through retry topics (the members subscribe to those too) */
  mode: 'blocking' | 'retry-topics'
  /** the wrapper around eachMessage or eachBatch */
  around: 'message' | 'batch'
}

/** What a handler calls after processing a message of its batch, in this order (eachBatch). */
export const COMMIT_STEPS = ['resolve', 'ifNecessary', 'ifNecessaryOffsets', 'commitOffsets'] as const
export type CommitStep = (typeof COMMIT_STEPS)[number]

/**
 * The options of one member that change what is committed, drawn at random alone and combined (orchestrator
 * planSlots): the checker covers the API, not one path through it. Each one exercised is recorded as a
 * `cover.<name>` stat, and the run's report lists them (its coverage table).
 */
export interface ConsumerDraw {
  autoCommit: boolean
  /** eachBatch: eachBatchAutoResolve */
  autoResolve: boolean
  /** eachBatch: after each message processed; eachMessage: commitOffsets when it is listed */
  steps: CommitStep[]
  /** eachBatch: handles a random prefix of the batch and returns (the rest must come again) */
  partial: boolean
  /** now and then a handler slower than sessionTimeout, then heartbeat(), then the commit steps */
  slow: boolean
  /** pause (resumed a little later) or a seek back, from inside the handler, mid-batch */
  midBatch: boolean
}

export interface Connection {
  transport: Transport
  /** pgQueue: through the fault proxy, tagged with the worker's application_name */
  pgUrl?: string
  schema?: string
  brokers?: string[]
}

interface Common extends Connection {
  id: string
  writer: string
  seed: number
  dir: string
  stuckBoundMs: number
  sessionTimeoutMs: number
}

export interface ProducerSpec extends Common {
  role: 'producer'
  topics: TopicPlan[]
  ops: ProducerOp[]
  priorities: boolean
  /** transactions and outbox sends may span partitions (else each writes one partition) */
  multiPartition: boolean
  /** the business table outbox transactions write to */
  bizTable?: string
}

export interface ConsumerSpec extends Common {
  role: 'consumer'
  group: string
  subscribe: string[]
  handler: Handler
  ops: ConsumerOp[]
  concurrency: number
  draw: ConsumerDraw
  /** the handler through deadLetter(): poison messages fail until they are moved to the dead-letter topic */
  deadLetter?: DeadLetterPlan
}

export interface TransformSpec extends Common {
  role: 'transform'
  group: string
  input: string
  output: string
  transactionalId: string
}

export interface MaintenanceSpec extends Common {
  role: 'maintenance'
}

export type WorkerSpec = ProducerSpec | ConsumerSpec | TransformSpec | MaintenanceSpec
