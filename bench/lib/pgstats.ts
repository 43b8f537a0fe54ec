// PostgreSQL-side measurements for the footprint scenario: relation sizes and row churn (dead tuples).
import pg from 'pg'

const PREFIX = 'metadata_queue'

/** Which tables a consumed message can churn: the message partitions, offsets and leases. */
const CHURN_TABLES = ['message', 'consumer_offset', 'partition_lease', 'message_group_lease'].map((t) => `${PREFIX}_${t}`)

export interface Churn {
  /** n_dead_tup (can drop when autovacuum runs in between) */
  deadTuples: number
  /** rows updated or deleted: each leaves one dead tuple behind */
  updatedOrDeleted: number
  hotUpdated: number
  inserted: number
}

/** Stats of the churn tables, summed over message partitions; call after the writers' sessions have ended. */
export async function churn(pool: pg.Pool, schema: string): Promise<Churn> {
  const client = await pool.connect()
  try {
    await client.query('SELECT pg_stat_clear_snapshot()')
    const res = await client.query<{ dead: string; upd_del: string; hot: string; ins: string }>(
      `SELECT COALESCE(sum(s.n_dead_tup), 0) AS dead, COALESCE(sum(s.n_tup_upd + s.n_tup_del), 0) AS upd_del,
              COALESCE(sum(s.n_tup_hot_upd), 0) AS hot, COALESCE(sum(s.n_tup_ins), 0) AS ins
       FROM pg_stat_user_tables s
       LEFT JOIN pg_inherits i ON i.inhrelid = s.relid
       LEFT JOIN pg_class parent ON parent.oid = i.inhparent
       WHERE s.schemaname = $1 AND (s.relname = ANY($2) OR parent.relname = ANY($2))`,
      [schema, CHURN_TABLES],
    )
    const r = res.rows[0]!
    return { deadTuples: Number(r.dead), updatedOrDeleted: Number(r.upd_del), hotUpdated: Number(r.hot), inserted: Number(r.ins) }
  } finally {
    client.release()
  }
}

export interface RelationSize {
  table: string
  tableBytes: number
  indexBytes: number
  /** live rows (statistics; exact enough for insert-only tables) */
  rows: number
}

/** Heap (+TOAST) and index sizes per table of the schema, message partitions summed into the message table. */
export async function relationSizes(pool: pg.Pool, schema: string): Promise<RelationSize[]> {
  await pool.query('SELECT pg_stat_clear_snapshot()')
  const res = await pool.query<{ name: string; table_bytes: string; index_bytes: string; rows: string }>(
    `SELECT COALESCE(parent.relname, c.relname) AS name,
            sum(pg_table_size(c.oid)) AS table_bytes, sum(pg_indexes_size(c.oid)) AS index_bytes,
            COALESCE(sum(pg_stat_get_live_tuples(c.oid)), 0) AS rows
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
     LEFT JOIN pg_class parent ON parent.oid = i.inhparent
     WHERE n.nspname = $1 AND c.relkind = 'r'
     GROUP BY 1 ORDER BY 2 DESC`,
    [schema],
  )
  return res.rows
    .map((r) => ({
      table: r.name.replace(`${PREFIX}_`, ''),
      tableBytes: Number(r.table_bytes),
      indexBytes: Number(r.index_bytes),
      rows: Number(r.rows),
    }))
    .filter((r) => r.tableBytes + r.indexBytes > 16384)
}

/** Sizes of each index of the message table (summed over partitions). */
export async function messageIndexSizes(pool: pg.Pool, schema: string): Promise<Record<string, number>> {
  const res = await pool.query<{ name: string; bytes: string }>(
    `SELECT COALESCE(pi.relname, ci.relname) AS name, sum(pg_relation_size(ci.oid)) AS bytes
     FROM pg_index x
     JOIN pg_class ci ON ci.oid = x.indexrelid
     JOIN pg_class ct ON ct.oid = x.indrelid
     JOIN pg_namespace n ON n.oid = ct.relnamespace
     JOIN pg_inherits it ON it.inhrelid = ct.oid
     JOIN pg_class parent ON parent.oid = it.inhparent AND parent.relname = $2
     LEFT JOIN pg_inherits ii ON ii.inhrelid = ci.oid
     LEFT JOIN pg_class pi ON pi.oid = ii.inhparent
     WHERE n.nspname = $1
     GROUP BY 1 ORDER BY 2 DESC`,
    [schema, `${PREFIX}_message`],
  )
  return Object.fromEntries(res.rows.map((r) => [r.name.replace(`${PREFIX}_`, ''), Number(r.bytes)]))
}

export async function serverInfo(pool: pg.Pool): Promise<Record<string, string>> {
  const res = await pool.query<{ name: string; setting: string }>(
    `SELECT 'version' AS name, current_setting('server_version') AS setting
     UNION ALL
     SELECT name, setting || COALESCE(unit, '') FROM pg_settings
     WHERE name IN ('shared_buffers', 'synchronous_commit', 'fsync', 'wal_buffers', 'max_wal_size', 'commit_delay',
                    'checkpoint_timeout', 'work_mem', 'jit', 'max_connections')`,
  )
  return Object.fromEntries(res.rows.map((r) => [r.name, r.setting]))
}
