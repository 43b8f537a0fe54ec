// Least-privilege roles for one queue schema + table prefix, created on request (opt-in): never by `migrate`, because
// roles are cluster-wide, CREATE ROLE needs a privilege application users usually lack, and a DBA decides who owns
// what. Idempotent: run it after every migration (new tables and functions get their grants).
//
//   <rolePrefix>_writer  produce: read the topic catalogue, allocate sequence numbers, insert messages, idempotent and
//                        transactional producer state; optionally create topics (KafkaJS's allowAutoTopicCreation)
//   <rolePrefix>_reader  consume and commit: read messages, group membership, partition leases, committed offsets
//   <rolePrefix>_admin   owns the schema and everything in it: migrations (DDL), topic admin, retention/maintenance
//
// The three are NOLOGIN group roles: grant them to login roles (`GRANT app_writer TO billing_service`). Neither
// writer nor reader owns anything, so neither can DROP, ALTER or TRUNCATE; writer cannot read messages or commit
// offsets; reader cannot write messages. The functions the runtime calls that create objects (message partitions)
// or renumber rows at commit (deferred sequence numbers) run SECURITY DEFINER as the admin role, with search_path
// pinned here to pg_catalog, the schema, pg_temp (the caller's temporary objects last, never `public`), so the
// runtime never needs more than its role and cannot make those functions run its own code. Any other function of the
// schema found SECURITY DEFINER is turned back to SECURITY INVOKER, and privileges held by roles other than these
// three are revoked (docs/security.md): what a past escalation planted does not survive a createRoles run.
import type pg from 'pg'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { validateSqlName } from '../config/sqlNames.js'
import { quoteIdent } from '../db/identifiers.js'
import { revokeForeignGrants } from './foreignGrants.js'

export interface RoleOptions {
  schema: string
  prefix: string
  /** role names are `<rolePrefix>_writer`, `_reader`, `_admin`; default: the table prefix */
  rolePrefix?: string
  /** the writer may create topics (INSERT on the topic catalogue and sequence ledger); default true */
  writerCreatesTopics?: boolean
  /**
   * make the admin role own the schema and every object in it (needed for the admin to run migrations and drop
   * partitions); default true. With false the admin only gets ALL privileges, which is not enough for DDL.
   */
  transferOwnership?: boolean
  /**
   * keep privileges on the schema's objects that other roles (logins, PUBLIC) hold directly; default false: they are
   * revoked, so the three roles are the only way in. Grant a queue role to a login instead.
   */
  keepOtherGrants?: boolean
  log?: (msg: string) => void
}

export interface QueueRoles {
  writer: string
  reader: string
  admin: string
}

type Privilege = 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE'

/**
 * Table privileges by table suffix (the table is `<prefix>_<suffix>`). Tables a schema does not have (yet) are
 * skipped. The admin is not listed: it owns everything.
 */
export const TABLE_GRANTS: Record<'writer' | 'reader', Record<string, Privilege[]>> = {
  writer: {
    schema_migration: ['SELECT'], // the pending-migration check on connect
    content_type: ['SELECT'],
    topic: ['SELECT'], // + INSERT with writerCreatesTopics
    partition_seq: ['SELECT', 'UPDATE'], // allocate seqs; + INSERT with writerCreatesTopics
    message: ['INSERT'], // no SELECT of the rows: a writer cannot read what others wrote (see WRITER_COLUMNS)
    outbox_message: ['INSERT'], // outbox sends of REPEATABLE READ / SERIALIZABLE callers, staged unnumbered
    producer_sequence: ['SELECT', 'INSERT', 'UPDATE'], // idempotent producer
    transactional_producer: ['SELECT', 'INSERT', 'UPDATE'], // transactional id epochs (SELECT ... FOR UPDATE)
  },
  reader: {
    schema_migration: ['SELECT'],
    content_type: ['SELECT'],
    topic: ['SELECT'],
    partition_seq: ['SELECT'], // watermarks
    message: ['SELECT'],
    consumer_offset: ['SELECT', 'INSERT', 'UPDATE'], // commit, never DELETE (that is admin.deleteGroups)
    group_member: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'], // heartbeats expire silent members
    partition_lease: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'],
    group_generation: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'], // the group leader writes each generation
    consumer_registration: ['SELECT', 'INSERT', 'UPDATE'], // DataHub's registration, kept alive by heartbeats
    message_group_lease: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'], // DataHub clients' per-message leases and ack markers
    delivery_attempt: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'], // failed attempts counted by the dead-letter extension
  },
}

/**
 * Column privileges of the writer: where each partition's log starts (KafkaJS's send result carries logStartOffset),
 * never payloads, keys or headers.
 */
const WRITER_COLUMNS: Record<string, { privilege: Privilege; columns: string[] }> = {
  message: { privilege: 'SELECT', columns: ['topic_id', 'partition_id', 'enqueue_seq'] },
}

/** Sequences by suffix the writer calls nextval() on (provisional seqs of transactional sends). */
const WRITER_SEQUENCES = ['provisional_seq']

/**
 * Functions (by suffix) the runtime calls, run as their owner (the admin role). Their bodies schema-qualify every
 * name; a function made SECURITY DEFINER by a migration must be listed here too, or createRoles makes it INVOKER.
 */
const DEFINER_FUNCTIONS = [
  'ensure_partitions',
  'assign_deferred_seq',
  'allocate_seq',
  'allocate_partitions',
  'defer_partition',
  'advance_ledger',
  'check_message_topic',
  'delete_topic_messages',
  'seed_topic_ledger',
  'outbox_begin',
  'outbox_ticket',
  'number_outbox',
  'read_horizon',
]

/**
 * Functions (by suffix) each runtime role may call: only the writer allocates sequence numbers (a reader calling
 * allocate_seq would burn seqs no row ever gets, a gap that stalls every consumer of the partition).
 */
const RUNTIME_FUNCTIONS: Record<'writer' | 'reader', string[]> = {
  // number_outbox allocates exactly the seqs of the staged rows it moves: any client may drive it
  writer: [
    'ensure_partitions',
    'partition_floor',
    'allocate_seq',
    'allocate_partitions',
    'defer_partition',
    'outbox_begin',
    'number_outbox',
    'read_horizon',
  ],
  reader: ['ensure_partitions', 'partition_floor', 'number_outbox', 'read_horizon'],
}

const ROLE_NAME = /^[a-z_][a-z0-9_]*$/

export function roleNames(opts: Pick<RoleOptions, 'prefix' | 'rolePrefix'>): QueueRoles {
  const base = (opts.rolePrefix ?? opts.prefix).toLowerCase()
  const names = { writer: `${base}_writer`, reader: `${base}_reader`, admin: `${base}_admin` }
  for (const name of Object.values(names)) {
    if (!ROLE_NAME.test(name) || name.length > 63) {
      throw new KafkaJSNonRetriableError(
        `Invalid role name ${JSON.stringify(name)} (from rolePrefix ${JSON.stringify(base)}): expected [a-z_][a-z0-9_]* of at most 63 characters`,
      )
    }
  }
  return names
}

type Runner = Pick<pg.ClientBase, 'query'>

/**
 * Creates (if missing) the three roles and (re)applies their grants on the queue schema, in one transaction. Needs a
 * connection that may CREATE ROLE and owns the schema objects (a superuser or the DBA). The schema must exist
 * (migrate first). Returns the role names.
 */
export async function createRoles(db: pg.Pool | pg.ClientBase, opts: RoleOptions): Promise<QueueRoles> {
  const schema = validateSqlName('schema', opts.schema)
  const prefix = validateSqlName('table prefix', opts.prefix)
  const roles = roleNames({ prefix, rolePrefix: opts.rolePrefix })
  const log = opts.log ?? (() => undefined)
  const pooled = 'totalCount' in db
  const client = pooled ? await (db as pg.Pool).connect() : (db as pg.ClientBase)
  try {
    await client.query('BEGIN')
    try {
      await apply(client, schema, prefix, roles, opts, log)
      await client.query('COMMIT')
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined)
      throw err
    }
  } finally {
    if (pooled) (client as pg.PoolClient).release()
  }
  return roles
}

async function apply(q: Runner, schema: string, prefix: string, roles: QueueRoles, opts: RoleOptions, log: (m: string) => void): Promise<void> {
  const S = quoteIdent(schema)
  const W = quoteIdent(roles.writer)
  const R = quoteIdent(roles.reader)
  const A = quoteIdent(roles.admin)
  // two runs at once would race on CREATE ROLE
  await q.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`kafkajs-pgqueue:roles:${schema}:${prefix}`])
  const { rowCount: hasSchema } = await q.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])
  if (!hasSchema) throw new KafkaJSNonRetriableError(`Schema "${schema}" does not exist: run the migrations first, then create the roles`)

  for (const name of Object.values(roles)) {
    const { rowCount } = await q.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [name])
    if (!rowCount) {
      await q.query(`CREATE ROLE ${quoteIdent(name)} NOLOGIN`)
      log(`created role ${name}`)
    }
  }

  const table = (suffix: string) => `${prefix}_${suffix}`
  const { rows: relations } = await q.query<{ name: string; kind: string; owned_by_column: boolean }>(
    `SELECT c.relname AS name, c.relkind::text AS kind,
            EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i')
                    AND d.refclassid = 'pg_class'::regclass) AS owned_by_column
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'S') AND NOT c.relispartition`,
    [schema],
  )
  const names = new Set(relations.map((r) => r.name))
  // functions and procedures (the maintenance procedures); aggregates would need ALTER AGGREGATE, there are none
  const { rows: functions } = await q.query<{ name: string; signature: string; definer: boolean }>(
    `SELECT p.proname AS name, p.oid::regprocedure::text AS signature, p.prosecdef AS definer
     FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.prokind IN ('f', 'p', 'w')`,
    [schema],
  )

  const transfer = opts.transferOwnership ?? true
  if (transfer) {
    await q.query(`ALTER SCHEMA ${S} OWNER TO ${A}`)
    // tables carry their indexes and identity sequences; partitions are altered one by one below
    const { rows: allTables } = await q.query<{ name: string; kind: string }>(
      `SELECT c.relname AS name, c.relkind::text AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm')`,
      [schema],
    )
    for (const r of allTables) {
      const what = r.kind === 'v' ? 'VIEW' : r.kind === 'm' ? 'MATERIALIZED VIEW' : 'TABLE'
      await q.query(`ALTER ${what} ${S}.${quoteIdent(r.name)} OWNER TO ${A}`)
    }
    for (const r of relations.filter((x) => x.kind === 'S' && !x.owned_by_column)) {
      await q.query(`ALTER SEQUENCE ${S}.${quoteIdent(r.name)} OWNER TO ${A}`)
    }
    for (const f of functions) await q.query(`ALTER ROUTINE ${f.signature} OWNER TO ${A}`)
  }

  // start from nothing, so a second run after a change of options takes privileges away too
  if (!opts.keepOtherGrants) for (const line of await revokeForeignGrants(q, schema, Object.values(roles), roles.admin)) log(line)
  await q.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${S} FROM ${W}, ${R}`)
  await q.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${S} FROM ${W}, ${R}`)
  await q.query(`REVOKE ALL ON ALL ROUTINES IN SCHEMA ${S} FROM PUBLIC, ${W}, ${R}`)
  await q.query(`REVOKE ALL ON SCHEMA ${S} FROM PUBLIC, ${W}, ${R}`)
  await q.query(`GRANT USAGE ON SCHEMA ${S} TO ${W}, ${R}`)
  await q.query(`GRANT ALL ON SCHEMA ${S} TO ${A}`)
  await q.query(`GRANT ALL ON ALL TABLES IN SCHEMA ${S} TO ${A}`)
  await q.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA ${S} TO ${A}`)
  await q.query(`GRANT ALL ON ALL ROUTINES IN SCHEMA ${S} TO ${A}`)

  const writerGrants: Record<string, Privilege[]> = { ...TABLE_GRANTS.writer }
  if (opts.writerCreatesTopics ?? true) {
    writerGrants.topic = [...writerGrants.topic, 'INSERT']
    writerGrants.partition_seq = [...writerGrants.partition_seq, 'INSERT']
    writerGrants.content_type = [...writerGrants.content_type, 'INSERT'] // a topic's default content type, when new
  }
  for (const [role, grants] of [
    [W, writerGrants],
    [R, TABLE_GRANTS.reader],
  ] as const) {
    for (const [suffix, privileges] of Object.entries(grants)) {
      if (!names.has(table(suffix))) continue
      await q.query(`GRANT ${privileges.join(', ')} ON ${S}.${quoteIdent(table(suffix))} TO ${role}`)
    }
  }
  for (const [suffix, { privilege, columns }] of Object.entries(WRITER_COLUMNS)) {
    if (names.has(table(suffix)))
      await q.query(`GRANT ${privilege} (${columns.map(quoteIdent).join(', ')}) ON ${S}.${quoteIdent(table(suffix))} TO ${W}`)
  }
  for (const suffix of WRITER_SEQUENCES) {
    if (names.has(table(suffix))) await q.query(`GRANT USAGE, SELECT ON SEQUENCE ${S}.${quoteIdent(table(suffix))} TO ${W}`)
  }
  for (const f of functions) {
    const suffix = f.name.startsWith(`${prefix}_`) ? f.name.slice(prefix.length + 1) : undefined
    if (suffix === undefined) continue
    if (RUNTIME_FUNCTIONS.writer.includes(suffix)) await q.query(`GRANT EXECUTE ON FUNCTION ${f.signature} TO ${W}`)
    if (RUNTIME_FUNCTIONS.reader.includes(suffix)) await q.query(`GRANT EXECUTE ON FUNCTION ${f.signature} TO ${R}`)
  }
  for (const f of functions) {
    const suffix = f.name.startsWith(`${prefix}_`) ? f.name.slice(prefix.length + 1) : undefined
    // only ever as the admin role: a function still owned by a superuser is never made SECURITY DEFINER
    const ours = suffix !== undefined && DEFINER_FUNCTIONS.includes(suffix)
    if (transfer && ours) {
      await q.query(`ALTER ROUTINE ${f.signature} SECURITY DEFINER SET search_path = pg_catalog, ${S}, pg_temp`)
    } else if (f.definer) {
      await q.query(`ALTER ROUTINE ${f.signature} SECURITY INVOKER`)
      if (!ours) log(`${f.signature} was SECURITY DEFINER and is not one of ours: it now runs as its caller`)
    }
  }
  log(`granted ${roles.writer}, ${roles.reader}, ${roles.admin} on schema ${schema} (prefix ${prefix})`)
}
