import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, describe, expect, it } from 'vitest'
import { KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import { quoteIdent } from '../../../src/db/identifiers.js'
import { migrate, schemaExists, findPendingMigrations } from '../../../src/store/migrator.js'
import { deferred, useTestSchema } from '../../helpers/db.js'

const db = useTestSchema('migrator')
const PREFIX = 'mq'
const REPO = path.resolve(__dirname, '../../..')

// Scripts record each execution in a side-effect table, so "ran exactly once" is countable.
const V001 = `CREATE TABLE __PGQUEUE_PREFIX___side_effect (script text NOT NULL, n bigserial);
INSERT INTO __PGQUEUE_PREFIX___side_effect (script) VALUES ('V001');
CREATE TABLE __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic (id int PRIMARY KEY);`
const V002 = `ALTER TABLE __PGQUEUE_PREFIX___topic ADD COLUMN name text;
INSERT INTO __PGQUEUE_PREFIX___side_effect (script) VALUES ('V002');`
const R_FUNCS = `CREATE OR REPLACE FUNCTION __PGQUEUE_PREFIX___answer() RETURNS int LANGUAGE sql AS $$ SELECT __ANSWER__ $$;
INSERT INTO __PGQUEUE_PREFIX___side_effect (script) VALUES ('R__funcs');`

const dirs: string[] = []
const schemas: string[] = []
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  await Promise.all(schemas.map((s) => db.pool.query(`DROP SCHEMA IF EXISTS ${quoteIdent(s)} CASCADE`)))
})

function migrationsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgq-migrations-'))
  dirs.push(dir)
  writeScripts(dir, files)
  return dir
}

function writeScripts(dir: string, files: Record<string, string>): void {
  for (const [name, sql] of Object.entries(files)) writeFileSync(path.join(dir, name), sql)
}

let counter = 0
function newSchema(): string {
  const schema = `${db.schema}_${++counter}`
  schemas.push(schema)
  return schema
}

async function run(schema: string, dir: string, answer = '42') {
  const client = await db.pool.connect()
  try {
    return await migrate(client, { schema, prefix: PREFIX, migrationsDir: dir, tokens: { __ANSWER__: answer } })
  } finally {
    client.release()
  }
}

async function ledger(schema: string) {
  const { rows } = await db.pool.query<{ version_rank: number; version: string; type: string; checksum: string; installed_on: Date }>(
    `SELECT version_rank, version, type, script_name, checksum, installed_on, success
       FROM ${quoteIdent(schema)}.${quoteIdent(`${PREFIX}_schema_migration`)} ORDER BY version_rank`,
  )
  return rows
}

async function sideEffects(schema: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ script: string }>(
    `SELECT script FROM ${quoteIdent(schema)}.${quoteIdent(`${PREFIX}_side_effect`)} ORDER BY n`,
  )
  return rows.map((r) => r.script)
}

describe('migrate', () => {
  it('applies versioned scripts in numeric order, then repeatables, and records the ledger', async () => {
    const schema = newSchema()
    // V10 sorts before V2 by name: the order must come from the number
    const dir = migrationsDir({
      'V1__base.sql': V001,
      'V2__more.sql': V002,
      'V10__last.sql': `INSERT INTO __PGQUEUE_PREFIX___side_effect (script) VALUES ('V010');`,
      'R__funcs.sql': R_FUNCS,
    })
    const { applied } = await run(schema, dir)
    expect(applied).toEqual(['V1__base.sql', 'V2__more.sql', 'V10__last.sql', 'R__funcs.sql'])
    expect(await sideEffects(schema)).toEqual(['V001', 'V002', 'V010', 'R__funcs'])
    const rows = await ledger(schema)
    expect(rows.map((r) => [r.version_rank, r.version, r.type])).toEqual([
      [1, 'V001', 'VERSIONED'],
      [2, 'V002', 'VERSIONED'],
      [3, 'V010', 'VERSIONED'],
      [4, 'R__funcs', 'REPEATABLE'],
    ])
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.checksum))).toBe(true)
    // unqualified names landed in the target schema (search_path), tokens were substituted
    const { rows: answer } = await db.pool.query(`SELECT ${quoteIdent(schema)}.mq_answer() AS a`)
    expect(answer[0].a).toBe(42)
  })

  it('is a no-op the second time', async () => {
    const schema = newSchema()
    const dir = migrationsDir({ 'V001__base.sql': V001, 'R__funcs.sql': R_FUNCS })
    await run(schema, dir)
    const before = await ledger(schema)
    expect(await findPendingMigrations(db.pool, { schema, prefix: PREFIX, migrationsDir: dir, tokens: { __ANSWER__: '42' } })).toEqual([])
    expect((await run(schema, dir)).applied).toEqual([])
    expect(await ledger(schema)).toEqual(before)
    expect(await sideEffects(schema)).toEqual(['V001', 'R__funcs'])
  })

  it('refuses a changed versioned script and applies nothing else in that run', async () => {
    const schema = newSchema()
    const dir = migrationsDir({ 'V001__base.sql': V001, 'R__funcs.sql': R_FUNCS })
    await run(schema, dir)
    const before = await ledger(schema)
    writeScripts(dir, {
      'V001__base.sql': `${V001}\n-- edited after release`,
      'V002__more.sql': V002,
    })
    const err = await run(schema, dir, '43').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect((err as Error).message).toMatch(/V001__base\.sql was changed/)
    expect(await ledger(schema)).toEqual(before)
    expect(await sideEffects(schema)).toEqual(['V001', 'R__funcs'])
    const { rows } = await db.pool.query(`SELECT ${quoteIdent(schema)}.mq_answer() AS a`)
    expect(rows[0].a).toBe(42)
  })

  it('re-runs a changed repeatable and keeps its rank', async () => {
    const schema = newSchema()
    const dir = migrationsDir({ 'V001__base.sql': V001, 'R__funcs.sql': R_FUNCS })
    await run(schema, dir)
    const [, before] = await ledger(schema)
    expect((await run(schema, dir, '43')).applied).toEqual(['R__funcs.sql'])
    const rows = await ledger(schema)
    expect(rows).toHaveLength(2)
    expect(rows[1]?.version_rank).toBe(before?.version_rank)
    expect(rows[1]?.checksum).not.toBe(before?.checksum)
    expect(await sideEffects(schema)).toEqual(['V001', 'R__funcs', 'R__funcs'])
    const { rows: answer } = await db.pool.query(`SELECT ${quoteIdent(schema)}.mq_answer() AS a`)
    expect(answer[0].a).toBe(43)
  })

  it('adds a new versioned script after repeatables exist (no rank collision)', async () => {
    const schema = newSchema()
    const dir = migrationsDir({ 'V001__base.sql': V001, 'R__funcs.sql': R_FUNCS, 'R__other.sql': 'SELECT 1;' })
    await run(schema, dir)
    writeScripts(dir, { 'V002__more.sql': V002 })
    expect((await run(schema, dir)).applied).toEqual(['V002__more.sql'])
    const rows = await ledger(schema)
    expect(rows.map((r) => [r.version_rank, r.version])).toEqual([
      [1, 'V001'],
      [2, 'R__funcs'],
      [3, 'R__other'],
      [4, 'V002'],
    ])
    expect(new Set(rows.map((r) => r.version_rank)).size).toBe(rows.length)
  })

  it('rejects an unreplaced token before touching the database', async () => {
    const schema = newSchema()
    const dir = migrationsDir({ 'V001__base.sql': V001, 'R__maint.sql': 'DELETE FROM x LIMIT __BATCH_DELETE_LIMIT__;' })
    const err = await run(schema, dir).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect((err as Error).message).toBe('Unreplaced token __BATCH_DELETE_LIMIT__ in migration R__maint.sql')
    const client = await db.pool.connect()
    try {
      expect(await schemaExists(client, schema)).toBe(false)
    } finally {
      client.release()
    }
  })

  it('rolls everything back when a script fails: no schema, no objects, no ledger', async () => {
    const schema = newSchema()
    const dir = migrationsDir({
      'V001__base.sql': V001,
      'V002__broken.sql': 'CREATE TABLE half_done (id int);\nSELECT 1 / 0;',
    })
    const err = await run(schema, dir).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect((err as Error).message).toMatch(/V002__broken\.sql.*division by zero.*SQLSTATE 22012/)
    expect((err as Error & { cause?: { code?: string } }).cause?.code).toBe('22012')
    const client = await db.pool.connect()
    try {
      expect(await schemaExists(client, schema)).toBe(false)
    } finally {
      client.release()
    }
  })

  it('leaves an existing ledger untouched when a later script fails', async () => {
    const schema = newSchema()
    const dir = migrationsDir({ 'V001__base.sql': V001 })
    await run(schema, dir)
    const before = await ledger(schema)
    writeScripts(dir, { 'V002__more.sql': V002, 'V003__broken.sql': 'SELECT * FROM no_such_table;' })
    await expect(run(schema, dir)).rejects.toThrow(/V003__broken\.sql/)
    expect(await ledger(schema)).toEqual(before)
    expect(await sideEffects(schema)).toEqual(['V001'])
    const { rows } = await db.pool.query(
      `SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'mq_topic' AND column_name = 'name'`,
      [schema],
    )
    expect(rows[0].n).toBe(0)
  })

  it('ten concurrent migrators on separate connections apply each script exactly once', async () => {
    const schema = newSchema()
    const dir = migrationsDir({ 'V001__base.sql': V001, 'V002__more.sql': V002, 'R__funcs.sql': R_FUNCS })
    const clients = await Promise.all(Array.from({ length: 10 }, () => db.connect()))
    const results = await Promise.all(
      clients.map((client) => migrate(client, { schema, prefix: PREFIX, migrationsDir: dir, tokens: { __ANSWER__: '42' } })),
    )
    const applied = results.map((r) => r.applied)
    expect(applied.filter((a) => a.length > 0)).toEqual([['V001__base.sql', 'V002__more.sql', 'R__funcs.sql']])
    expect(applied.filter((a) => a.length === 0)).toHaveLength(9)
    expect(await sideEffects(schema)).toEqual(['V001', 'V002', 'R__funcs'])
    expect((await ledger(schema)).map((r) => r.version_rank)).toEqual([1, 2, 3])
  })

  // ten node+tsx start-ups are CPU-bound: allow for a loaded two-core CI machine
  it('ten concurrent migrator processes apply each script exactly once', { timeout: 90_000 }, async () => {
    const schema = newSchema()
    const dir = migrationsDir({ 'V001__base.sql': V001, 'V002__more.sql': V002, 'R__funcs.sql': R_FUNCS })
    // each child connects, reports "ready", and migrates on "go": the ten really race
    const script = `
      const pg = require('pg')
      const { migrate } = require('./src/store/migrator.ts')
      const client = new pg.Client(process.env.PGQ_URL)
      client.connect().then(() => {
        process.stdout.write('ready\\n')
        process.stdin.once('data', async () => {
          try {
            const r = await migrate(client, { schema: process.env.PGQ_SCHEMA, prefix: 'mq', migrationsDir: process.env.PGQ_DIR, tokens: { __ANSWER__: '42' } })
            process.stdout.write(JSON.stringify(r) + '\\n')
          } catch (e) {
            process.stdout.write(JSON.stringify({ error: String(e) }) + '\\n')
          }
          await client.end()
        })
      })`
    const children: ChildProcess[] = []
    const outcomes = Array.from({ length: 10 }, () => ({ ready: deferred(), result: deferred<string>() }))
    try {
      for (const outcome of outcomes) {
        const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], {
          cwd: REPO,
          env: { ...process.env, PGQ_URL: db.connectionString, PGQ_SCHEMA: schema, PGQ_DIR: dir },
          stdio: ['pipe', 'pipe', 'pipe'],
        })
        children.push(child)
        let stderr = ''
        child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
        // settled-once deferreds: rejecting after a resolve is a no-op; unobserved ones must not go unhandled
        outcome.result.promise.catch(() => {})
        child.once('exit', (code, signal) => {
          const why = new Error(`migrator child exited (${code ?? signal}) before finishing: ${stderr.trim()}`)
          outcome.ready.reject(why)
          outcome.result.reject(why)
        })
        createInterface({ input: child.stdout! }).on('line', (line) => {
          if (line === 'ready') outcome.ready.resolve()
          else outcome.result.resolve(line)
        })
      }
      await Promise.all(outcomes.map((o) => o.ready.promise))
      for (const child of children) child.stdin!.write('go\n')
      const results = (await Promise.all(outcomes.map((o) => o.result.promise))).map(
        (line) => JSON.parse(line) as { applied?: string[]; error?: string },
      )
      expect(results.filter((r) => r.error)).toEqual([])
      expect(results.filter((r) => r.applied!.length > 0).map((r) => r.applied)).toEqual([['V001__base.sql', 'V002__more.sql', 'R__funcs.sql']])
      expect(await sideEffects(schema)).toEqual(['V001', 'V002', 'R__funcs'])
    } finally {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill()
    }
  })
})
