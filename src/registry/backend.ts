// Where the registry's tables live: the pool of a pgQueue `Kafka` (opened, and migrated when enabled, by its own
// connect logic) or a pool the caller owns plus the schema and table prefix.
import type pg from 'pg'
import type { Kafka } from '../kafka.js'
import { tablesFor, type Tables } from '../db/tables.js'

export type RegistryBackend =
  | { kafka: Kafka }
  | {
      pool: pg.Pool
      /** table names; or give `schema` / `tablePrefix` (defaults queue / metadata_queue) */
      tables?: Tables
      schema?: string
      tablePrefix?: string
    }

export interface OpenBackend {
  pool: pg.Pool
  tables: Tables
  /** releases the Kafka's pool reference; a caller-owned pool stays open */
  release(): Promise<void>
}

export async function openBackend(backend: RegistryBackend): Promise<OpenBackend> {
  // same pool, migrations and embedded server as the Kafka's producers and consumers
  if ('kafka' in backend) return backend.kafka.database()
  const tables = backend.tables ?? tablesFor(backend.schema ?? 'queue', backend.tablePrefix ?? 'metadata_queue')
  return { pool: backend.pool, tables, release: async () => {} }
}
