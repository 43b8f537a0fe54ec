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
  /** eachMessage through deadLetter(): poison messages fail until they are moved to the dead-letter topic */
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
