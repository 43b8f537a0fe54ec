// V034 moves the outbox tickets out of outbox_tx: a transaction that committed under the old trigger and was not
// numbered yet when the schema is upgraded keeps its ticket and is numbered once, in ticket order.
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { migrationTokens } from '../../../src/client/context.js'
import { resolveConfig } from '../../../src/config/resolve.js'
import { quoteIdent } from '../../../src/db/identifiers.js'
import { migrate } from '../../../src/store/migrator.js'
import { useTestSchema } from '../../helpers/db.js'

const db = useTestSchema('outbox-upgrade')
const PREFIX = 'metadata_queue'
const REPO = path.resolve(__dirname, '../../..')
const MIGRATIONS = path.join(REPO, 'migrations')
/** the last commit whose outbox numbering kept the ticket in outbox_tx */
const BEFORE_V034 = '2bd7587'

const dir = mkdtempSync(path.join(tmpdir(), 'pgq-before-v034-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function migrateWith(migrationsDir: string) {
  const client = await db.pool.connect()
  try {
    await migrate(client, { schema: db.schema, prefix: PREFIX, migrationsDir, tokens: migrationTokens(resolveConfig({}, {})) })
  } finally {
    client.release()
  }
}

describe('V034 outbox tickets', () => {
  it('a staged transaction committed before the upgrade is numbered after it, once, in ticket order', async () => {
    for (const f of readdirSync(MIGRATIONS)) if (f !== 'V034__outbox_committed.sql') copyFileSync(path.join(MIGRATIONS, f), path.join(dir, f))
    const old = execFileSync('git', ['show', `${BEFORE_V034}:migrations/R__outbox_numbering.sql`], { cwd: REPO, encoding: 'utf8' })
    writeFileSync(path.join(dir, 'R__outbox_numbering.sql'), old)
    await migrateWith(dir)

    const q = (table: string) => `${quoteIdent(db.schema)}.${quoteIdent(`${PREFIX}_${table}`)}`
    const fn = (name: string) => `${quoteIdent(db.schema)}.${quoteIdent(`${PREFIX}_${name}`)}`
    const topic = await db.pool.query<{ id: string }>(
      `INSERT INTO ${q('topic')} (topic_name, partition_count, retention_max_age_seconds, max_rows_per_topic, max_total_payload_bytes)
       VALUES ('upgrade', 1, 0, 0, 0) RETURNING id::text`,
    )
    const topicId = topic.rows[0].id
    const stage = async (key: string) => {
      const client = await db.pool.connect()
      try {
        await client.query('BEGIN ISOLATION LEVEL SERIALIZABLE')
        await client.query(
          `INSERT INTO ${q('outbox_message')} (tx_id, topic_id, partition_id, routing_key, priority, payload, payload_compression, kafka_flags)
           VALUES (${fn('outbox_begin')}(), $1, 0, $2, 5, '\\x00', 0, 0)`,
          [topicId, key],
        )
        await client.query('COMMIT')
      } finally {
        client.release()
      }
    }
    await stage('first')
    await stage('second')
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM ${q('outbox_tx')} WHERE ticket IS NOT NULL`)).rows[0].n).toBe(2)

    await migrateWith(MIGRATIONS)
    await stage('third') // under the new trigger
    const numbered = await db.pool.query<{ n: number }>(`SELECT ${fn('number_outbox')}(100, NULL) AS n`)
    expect(numbered.rows[0].n).toBe(3)
    const rows = await db.pool.query<{ key: string; seq: string }>(
      `SELECT routing_key AS key, enqueue_seq::text AS seq FROM ${q('message')} WHERE topic_id = $1 ORDER BY enqueue_seq`,
      [topicId],
    )
    expect(rows.rows).toEqual([
      { key: 'first', seq: '1' },
      { key: 'second', seq: '2' },
      { key: 'third', seq: '3' },
    ])
    expect((await db.pool.query(`SELECT ${fn('number_outbox')}(100, NULL) AS n`)).rows[0].n).toBe(0)
  })
})
