import path from 'node:path'
import { randomBytes } from 'node:crypto'
import kafkajs from 'kafkajs'
import type { Kafka, KafkaConfig } from 'kafkajs'
import { expect, inject } from 'vitest'

export * from './helpers.js'

export type BackendName = 'kafka' | 'pgqueue'

/** What `createKafka` of src/transport.ts must accept for the pgqueue branch. */
export interface PgQueueOptions {
  connectionString?: string
  schema?: string
  enabled?: boolean
  pool?: { connectionTimeoutMillis?: number }
}
export type TransportConfig = KafkaConfig & { pgqueue?: PgQueueOptions }
interface TransportModule {
  createKafka(config: TransportConfig): Kafka
}

export const backendName: BackendName = parseBackend(process.env.DATAHUB_MESSAGING_TRANSPORT)

/**
 * Behaviour a backend may not have (yet). `true` = supported; a string = the reason tests that need
 * it are reported as skipped on that backend. Differences live here, not as ifs in the tests.
 */
export type Capability = 'transactions' | 'groupAdmin' | 'offsetAdmin' | 'offsetsByTimestamp' | 'sendDuringOpenTransaction'

const CAPABILITIES: Record<BackendName, Record<Capability, true | string>> = {
  kafka: {
    transactions: true,
    groupAdmin: true,
    offsetAdmin: true,
    offsetsByTimestamp: true,
    sendDuringOpenTransaction: true,
  },
  pgqueue: {
    transactions: true,
    groupAdmin: true,
    offsetAdmin: true,
    offsetsByTimestamp: true,
    sendDuringOpenTransaction: true,
  },
}

export const capabilities = CAPABILITIES[backendName]

/**
 * Documented differences that are values rather than missing features (docs/compatibility.md, "Transactions").
 * Whether the log holds control records: Kafka appends a commit/abort marker to each partition a transaction wrote
 * (it takes an offset, and a fetch of only markers and aborted messages reaches START/END_BATCH_PROCESS with
 * batchSize 0); pgQueue stores neither markers nor aborted messages, as a gap in `enqueue_seq` would stall DataHub's
 * contiguous offset watermark for good.
 */
export const controlRecords = backendName === 'kafka'
/** Offsets a committed transaction's marker takes in each partition it wrote. */
export const transactionMarkerOffsets = controlRecords ? 1 : 0

/** RecordMetadata.baseOffset of a send inside a transaction: pgQueue numbers a transaction's messages at COMMIT. */
export function transactionalBaseOffset(onKafka: string): string {
  return backendName === 'kafka' ? onKafka : '-1'
}

/** Why no test can run on this backend right now (e.g. no broker and COMPAT_REQUIRE_KAFKA unset). */
export function backendUnavailable(): string | null {
  return backendName === 'kafka' ? inject('kafkaUnavailable') : null
}

/** Returns the reason a test needing these capabilities is pending here, or null if it can run. */
export function pendingReason(needs: readonly Capability[]): string | null {
  const down = backendUnavailable()
  if (down) return down
  for (const need of needs) {
    const cap = capabilities[need]
    if (cap !== true) return `${backendName} lacks ${need}: ${cap}`
  }
  return null
}

/** A KafkaJS `Kafka` for the selected backend; everything in the suite goes through this. */
export async function makeKafka(opts: { clientId?: string; config?: Omit<KafkaConfig, 'brokers' | 'clientId'> } = {}): Promise<Kafka> {
  const clientId = opts.clientId ?? 'compat'
  if (backendName === 'kafka') {
    return new kafkajs.Kafka({ logLevel: kafkajs.logLevel.NOTHING, ...opts.config, clientId, brokers: inject('kafkaBrokers') })
  }
  const { createKafka } = (await import('../src/transport.js')) as TransportModule
  return createKafka({
    ...opts.config,
    clientId,
    brokers: ['pgqueue'],
    logLevel: kafkajs.logLevel.NOTHING,
    pgqueue: {
      enabled: true,
      connectionString: inject('pgUrl'),
      schema: fileSchema(),
      // npm test runs this suite beside two other lanes on two cores: a new connection to the embedded server took
      // over DataHub's 1 s there (fresh-clone runs 1 and 2 of 4 Dec: KafkaJSConnectionError "connection timeout" in
      // fidelity-admin's first tests); docs/configuration.md says to raise it under test load
      pool: { connectionTimeoutMillis: 10_000 },
    },
  })
}

/**
 * One maintenance pass where the backend needs one: pgqueue compacts (and applies retention) in its maintenance run,
 * which its in-app scheduler starts at most once a minute; Kafka's log cleaner runs by itself (the harness broker
 * checks every log.cleaner.backoff.ms). Tests that wait for compaction call this in their poll loop.
 */
export async function maintenancePass(): Promise<void> {
  if (backendName === 'kafka') return
  const [{ runMaintenance }, { tablesFor }, { resolveConfig }, pg] = await Promise.all([
    import('../src/maintenance/run.js'),
    import('../src/db/tables.js'),
    import('../src/config/resolve.js'),
    import('pg'),
  ])
  const pool = new pg.default.Pool({ connectionString: inject('pgUrl'), max: 1 })
  try {
    const maintenance = resolveConfig({ connectionString: inject('pgUrl'), schema: fileSchema() }).maintenance
    await runMaintenance({ pool, tables: tablesFor(fileSchema(), 'metadata_queue'), maintenance }, { vacuum: false })
  } finally {
    await pool.end()
  }
}

let schemaOfThisFile: string | undefined

/**
 * One schema per test file (modules are isolated per file): compat_<run>_<file>_<random>. The run id
 * lets the global teardown drop exactly this run's schemas.
 */
export function fileSchema(): string {
  if (!schemaOfThisFile) {
    const file = path.basename(expect.getState().testPath ?? 'file', '.test.ts').replace(/[^a-z0-9]/gi, '_')
    const run = inject('compatRunId')
    schemaOfThisFile = `compat_${run}_${file.toLowerCase().slice(0, 30)}_${randomBytes(4).toString('hex')}`
  }
  return schemaOfThisFile
}

function parseBackend(value: string | undefined): BackendName {
  const v = (value ?? 'kafka').trim().toLowerCase() || 'kafka'
  if (v === 'kafka' || v === 'pgqueue') return v
  throw new Error(`DATAHUB_MESSAGING_TRANSPORT must be kafka or pgqueue, got ${JSON.stringify(value)}`)
}
