import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'

/** Schema and table prefix: DataHub's rule, plus PostgreSQL's 63-byte identifier limit (minus our longest suffix). */
const SQL_NAME = /^[a-z_][a-z0-9_]*$/
const MAX_SCHEMA_LENGTH = 63
const MAX_PREFIX_LENGTH = 40

/** Validates a schema or table-prefix name; names are lower-cased as DataHub does. */
export function validateSqlName(kind: 'schema' | 'table prefix', raw: string, variable?: string): string {
  const name = typeof raw === 'string' ? raw.toLowerCase() : raw
  const max = kind === 'schema' ? MAX_SCHEMA_LENGTH : MAX_PREFIX_LENGTH
  if (typeof name !== 'string' || !SQL_NAME.test(name) || name.length > max) {
    const where = variable ? ` (${variable})` : ''
    throw new KafkaJSNonRetriableError(
      `Invalid ${kind}${where}: ${JSON.stringify(raw)}; expected [a-zA-Z_][a-zA-Z0-9_]* of at most ${max} characters`,
    )
  }
  return name
}
