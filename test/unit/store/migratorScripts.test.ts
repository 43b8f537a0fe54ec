import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import {
  checksumOf,
  defaultMigrationsDir,
  type LedgerRow,
  loadMigrations,
  migrationLockKey,
  planMigrations,
  substituteTokens,
} from '../../../src/store/migrator.js'

const made: string[] = []
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgq-mig-'))
  made.push(dir)
  for (const [name, sql] of Object.entries(files)) writeFileSync(path.join(dir, name), sql)
  return dir
}

describe('substituteTokens', () => {
  it('replaces the prefix by plain substitution, leaving the suffix attached', () => {
    const sql = 'CREATE TABLE __PGQUEUE_PREFIX___topic (); CREATE INDEX idx___PGQUEUE_PREFIX___message_dequeue ON x(y);'
    expect(substituteTokens(sql, { __PGQUEUE_PREFIX__: 'metadata_queue' }, 'V001__s.sql')).toBe(
      'CREATE TABLE metadata_queue_topic (); CREATE INDEX idx_metadata_queue_message_dequeue ON x(y);',
    )
  })

  it('does not interpret $ patterns in values', () => {
    expect(substituteTokens("SELECT '__X__'", { __X__: "$&$1'" }, 's')).toBe("SELECT '$&$1''")
  })

  it('names the leftover token and the script', () => {
    expect(() => substituteTokens('DELETE ... LIMIT __BATCH_DELETE_LIMIT__', {}, 'R__maint.sql')).toThrow(
      /Unreplaced token __BATCH_DELETE_LIMIT__ in migration R__maint\.sql/,
    )
  })

  it('ignores lower-case markers such as __acked__', () => {
    expect(substituteTokens("SELECT '__acked__'", {}, 's')).toBe("SELECT '__acked__'")
  })
})

describe('loadMigrations', () => {
  it('orders VERSIONED by number (not by name), then REPEATABLE alphabetically, and substitutes tokens', () => {
    const dir = dirWith({
      'V10__ten.sql': 'SELECT 10;',
      'V2__two.sql': 'SELECT 2 FROM __PGQUEUE_SCHEMA__.__PGQUEUE_PREFIX___topic;',
      'V001__one.sql': ' SELECT 1; \n',
      'R__b.sql': 'SELECT __LIMIT__;',
      'R__a.sql': 'SELECT 0;',
      'README.md': 'ignored',
    })
    const scripts = loadMigrations({ schema: 'queue', prefix: 'mq', migrationsDir: dir, tokens: { __LIMIT__: '5000' } })
    expect(scripts.map((s) => [s.version, s.type])).toEqual([
      ['V001', 'VERSIONED'],
      ['V002', 'VERSIONED'],
      ['V010', 'VERSIONED'],
      ['R__a', 'REPEATABLE'],
      ['R__b', 'REPEATABLE'],
    ])
    expect(scripts[1]?.sql).toBe('SELECT 2 FROM "queue".mq_topic;')
    expect(scripts[4]?.sql).toBe('SELECT 5000;')
    // checksum of the trimmed, substituted SQL
    expect(scripts[0]?.checksum).toBe(checksumOf('SELECT 1;'))
    expect(scripts[0]?.checksum).toMatch(/^[0-9a-f]{64}$/)
  })

  it('rejects two scripts with the same version', () => {
    const dir = dirWith({ 'V1__a.sql': 'SELECT 1', 'V001__b.sql': 'SELECT 1' })
    expect(() => loadMigrations({ schema: 's', prefix: 'p', migrationsDir: dir })).toThrow(/share version V001/)
  })
})

describe('planMigrations', () => {
  const dir = dirWith({ 'V001__a.sql': 'SELECT 1;', 'R__f.sql': 'SELECT 2;' })
  const scripts = loadMigrations({ schema: 's', prefix: 'p', migrationsDir: dir })
  const row = (version: string, checksum: string, rank: number): LedgerRow => ({
    version_rank: rank,
    version,
    type: version.startsWith('V') ? 'VERSIONED' : 'REPEATABLE',
    script_name: '',
    checksum,
    success: true,
  })

  it('runs everything on an empty ledger and nothing when checksums match', () => {
    expect(planMigrations(scripts, []).map((s) => s.version)).toEqual(['V001', 'R__f'])
    const ledger = scripts.map((s, i) => row(s.version, s.checksum, i + 1))
    expect(planMigrations(scripts, ledger)).toEqual([])
  })

  it('re-runs a changed repeatable', () => {
    const ledger = [row('V001', scripts[0]!.checksum, 1), row('R__f', 'old', 2)]
    expect(planMigrations(scripts, ledger).map((s) => s.version)).toEqual(['R__f'])
  })

  it('refuses a changed versioned script, naming it', () => {
    const ledger = [row('V001', 'different', 1)]
    expect(() => planMigrations(scripts, ledger)).toThrow(KafkaJSNonRetriableError)
    expect(() => planMigrations(scripts, ledger)).toThrow(/V001__a\.sql was changed/)
  })
})

describe('migrationLockKey', () => {
  it('is a stable signed 64-bit value per schema + prefix', () => {
    const a = migrationLockKey('queue', 'metadata_queue')
    expect(migrationLockKey('queue', 'metadata_queue')).toBe(a)
    expect(migrationLockKey('queue2', 'metadata_queue')).not.toBe(a)
    const n = BigInt(a)
    expect(n >= -(2n ** 63n) && n < 2n ** 63n).toBe(true)
  })
})

describe('defaultMigrationsDir', () => {
  it('finds the package migrations/ folder from src/db', () => {
    expect(defaultMigrationsDir()).toBe(path.resolve(__dirname, '../../../migrations'))
  })

  it('fails clearly outside the package', () => {
    expect(() => defaultMigrationsDir(tmpdir())).toThrow(/cannot find the kafkajs-pgqueue migrations/)
  })
})
