// Forward-only SQL migrations with DataHub's ledger layout (<schema>.<prefix>_schema_migration), so a
// schema set up by DataHub's own migrator and ours read the same rows. Differences on purpose:
// the advisory lock comes first (before CREATE SCHEMA), and a new ledger row takes MAX(rank)+1
// instead of DataHub's maxV+n, which collides once a V00N+1 is added after repeatables (its bug 4).
// It lives in store/ with the other SQL: the ledger is one more table (docs/decisions/arch-010-migrator-in-store.md).
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import type { ClientBase, Pool } from 'pg'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { validateSqlName } from '../config/sqlNames.js'
import { quoteIdent } from '../db/identifiers.js'
import { toKafkaJSError } from '../db/pgErrors.js'
import { begin, commit, rollback } from './transactions.js'

export type MigrationType = 'VERSIONED' | 'REPEATABLE'

export interface MigrationScript {
  type: MigrationType
  /** `V001` or `R__<description>` */
  version: string
  /** VERSIONED: the number; REPEATABLE: 0 (they run after all versioned ones, alphabetically) */
  number: number
  description: string
  scriptName: string
  /** token-substituted, trimmed */
  sql: string
  checksum: string
}

export interface LedgerRow {
  version_rank: number
  version: string
  type: string
  script_name: string
  checksum: string
  success: boolean
}

export interface MigrateOptions {
  schema: string
  prefix: string
  /** defaults to the package's top-level migrations/ */
  migrationsDir?: string
  /** extra tokens, e.g. { __BATCH_DELETE_LIMIT__: '5000' } */
  tokens?: Record<string, string>
  log?: (msg: string) => void
}

const VERSIONED = /^V(\d+)__(.+)\.sql$/
const REPEATABLE = /^R__(.+)\.sql$/
const TOKEN_NAME = /^__[A-Z0-9_]+__$/
const LEFTOVER_TOKEN = /__[A-Z0-9_]+__/
const PACKAGE_NAME = 'kafkajs-pgqueue'

/** The package's migrations/ folder, found by walking up from this file (works from src/ and dist/). */
export function defaultMigrationsDir(startDir: string = __dirname): string {
  for (let dir = startDir; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json')
    if (existsSync(pkg) && existsSync(path.join(dir, 'migrations'))) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === PACKAGE_NAME) {
          return path.join(dir, 'migrations')
        }
      } catch {
        // unreadable package.json: keep walking
      }
    }
    if (dir === path.dirname(dir)) throw new Error(`cannot find the ${PACKAGE_NAME} migrations/ folder above ${startDir}`)
  }
}

/** Replaces every token (longest first, so no token eats part of a longer one) and rejects leftovers. */
export function substituteTokens(sql: string, tokens: Record<string, string>, scriptName: string): string {
  let out = sql
  for (const name of Object.keys(tokens).sort((a, b) => b.length - a.length)) {
    if (!TOKEN_NAME.test(name)) throw new KafkaJSNonRetriableError(`Invalid migration token name ${JSON.stringify(name)}`)
    out = out.split(name).join(tokens[name]) // split/join: no `$&` surprises as with String.replace
  }
  const leftover = LEFTOVER_TOKEN.exec(out)
  if (leftover) throw new KafkaJSNonRetriableError(`Unreplaced token ${leftover[0]} in migration ${scriptName}`)
  return out
}

export function checksumOf(sql: string): string {
  return createHash('sha256').update(sql.trim(), 'utf8').digest('hex')
}

function tokensFor(opts: MigrateOptions): Record<string, string> {
  return { ...opts.tokens, __PGQUEUE_SCHEMA__: quoteIdent(opts.schema), __PGQUEUE_PREFIX__: opts.prefix }
}

/** Reads, orders and substitutes the scripts: VERSIONED by number, then REPEATABLE by name. */
export function loadMigrations(opts: MigrateOptions): MigrationScript[] {
  const dir = opts.migrationsDir ?? defaultMigrationsDir()
  const tokens = tokensFor(opts)
  const versioned: MigrationScript[] = []
  const repeatable: MigrationScript[] = []
  for (const file of readdirSync(dir).sort()) {
    const v = VERSIONED.exec(file)
    const r = v ? null : REPEATABLE.exec(file)
    if (!v && !r) continue
    const sql = substituteTokens(readFileSync(path.join(dir, file), 'utf8'), tokens, file).trim()
    const common = { scriptName: file, sql, checksum: checksumOf(sql) }
    if (v) {
      const number = Number.parseInt(v[1] as string, 10)
      const version = `V${String(number).padStart(3, '0')}`
      const clash = versioned.find((m) => m.version === version)
      if (clash) throw new KafkaJSNonRetriableError(`Migrations ${clash.scriptName} and ${file} share version ${version}`)
      versioned.push({ type: 'VERSIONED', version, number, description: v[2] as string, ...common })
    } else if (r) {
      repeatable.push({ type: 'REPEATABLE', version: `R__${r[1]}`, number: 0, description: r[1] as string, ...common })
    }
  }
  versioned.sort((a, b) => a.number - b.number)
  return [...versioned, ...repeatable]
}

/**
 * Decides what to run against the ledger: VERSIONED with a matching checksum are skipped, with a
 * different one are a hard error; REPEATABLE run when new or changed.
 */
export function planMigrations(scripts: MigrationScript[], ledger: LedgerRow[]): MigrationScript[] {
  const byVersion = new Map(ledger.map((row) => [row.version, row]))
  return scripts.filter((script) => {
    const row = byVersion.get(script.version)
    if (!row || !row.success) return true
    if (row.checksum === script.checksum) return false
    if (script.type === 'REPEATABLE') return true
    throw new KafkaJSNonRetriableError(
      `Migration ${script.scriptName} was changed after it was applied (checksum ${row.checksum.slice(0, 12)}… in the ledger, ` +
        `${script.checksum.slice(0, 12)}… on disk); versioned migrations are immutable: add a new V script instead`,
    )
  })
}

/** Advisory-lock key for one schema + prefix: the first 8 bytes of a SHA-256, as a signed bigint string. */
export function migrationLockKey(schema: string, prefix: string): string {
  return createHash('sha256').update(`${PACKAGE_NAME}:migrate:${schema}:${prefix}`).digest().readBigInt64BE(0).toString()
}

function ledgerName(schema: string, prefix: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(`${prefix}_schema_migration`)}`
}

function ledgerDdl(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
  version_rank int PRIMARY KEY,
  version text NOT NULL UNIQUE,
  description text NOT NULL,
  type text NOT NULL CHECK (type IN ('VERSIONED', 'REPEATABLE')),
  script_name text NOT NULL,
  checksum text NOT NULL,
  installed_on timestamptz NOT NULL DEFAULT now(),
  execution_time_ms int NOT NULL,
  success boolean NOT NULL
)`
}

/**
 * Applies pending migrations in one transaction on `client` (which must not be inside one).
 * Concurrent callers on the same schema + prefix serialise on an advisory lock, so each script runs once.
 */
export async function migrate(client: ClientBase, opts: MigrateOptions): Promise<{ applied: string[] }> {
  const schema = validateSqlName('schema', opts.schema)
  const prefix = validateSqlName('table prefix', opts.prefix)
  const log = opts.log ?? (() => {})
  // read and substitute everything before touching the database: a bad token fails fast
  const scripts = loadMigrations({ ...opts, schema, prefix })
  const ledger = ledgerName(schema, prefix)
  const applied: string[] = []
  let current = 'setup'
  await begin(client, 'server default')
  try {
    // a migration may wait for another migrator and run long DDL: the pool's timeouts do not apply to it
    await client.query('SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0')
    // lock first: CREATE SCHEMA IF NOT EXISTS itself races (unique violation) between sessions
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [migrationLockKey(schema, prefix)])
    // CREATE SCHEMA checks the database-level CREATE privilege even when the schema exists: a role that owns the
    // schema but may not create schemas (the admin role of docs/security.md) must still be able to migrate
    if (!(await schemaExists(client, schema))) await client.query(`CREATE SCHEMA ${quoteIdent(schema)}`)
    await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}, public`)
    await client.query(ledgerDdl(ledger))
    const { rows } = await client.query<LedgerRow>(
      `SELECT version_rank, version, type, script_name, checksum, success FROM ${ledger} ORDER BY version_rank`,
    )
    const pending = planMigrations(scripts, rows)
    for (const script of pending) {
      current = script.scriptName
      const started = process.hrtime.bigint()
      await client.query(script.sql)
      // a script may move search_path (e.g. SET without LOCAL); put ours back for the next one
      await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}, public`)
      const ms = Number((process.hrtime.bigint() - started) / 1_000_000n)
      // new rows take MAX+1 (never collides); an updated repeatable keeps its rank
      await client.query(
        `INSERT INTO ${ledger} (version_rank, version, description, type, script_name, checksum, execution_time_ms, success)
         SELECT COALESCE(MAX(version_rank), 0) + 1, $1, $2, $3, $4, $5, $6, true FROM ${ledger}
         ON CONFLICT (version) DO UPDATE SET description = EXCLUDED.description, type = EXCLUDED.type,
           script_name = EXCLUDED.script_name, checksum = EXCLUDED.checksum, installed_on = now(),
           execution_time_ms = EXCLUDED.execution_time_ms, success = true`,
        [script.version, script.description, script.type, script.scriptName, script.checksum, ms],
      )
      applied.push(script.scriptName)
      log(`migration ${script.scriptName} applied to schema ${schema} in ${ms} ms`)
    }
    current = 'commit'
    await commit(client)
  } catch (err) {
    await rollback(client).catch(() => {})
    if (err instanceof KafkaJSNonRetriableError) throw err
    throw toKafkaJSError(err, `migration ${current} (schema ${schema}) failed and was rolled back`)
  }
  if (applied.length === 0) log(`schema ${schema} is up to date (${scripts.length} migrations)`)
  return { applied }
}

export async function schemaExists(client: ClientBase | Pool, schema: string): Promise<boolean> {
  const { rowCount } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])
  return (rowCount ?? 0) > 0
}

/** Script names `migrate` would run now (no lock taken; for status and health checks). */
export async function findPendingMigrations(client: ClientBase | Pool, opts: MigrateOptions): Promise<string[]> {
  const scripts = loadMigrations(opts)
  const { rows: exists } = await client.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [ledgerName(opts.schema, opts.prefix)])
  if (!exists[0]?.t) return scripts.map((s) => s.scriptName)
  const { rows } = await client.query<LedgerRow>(
    `SELECT version_rank, version, type, script_name, checksum, success FROM ${ledgerName(opts.schema, opts.prefix)}`,
  )
  return planMigrations(scripts, rows).map((s) => s.scriptName)
}
