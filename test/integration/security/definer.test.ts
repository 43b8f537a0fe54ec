// The SECURITY DEFINER functions run as the admin role on behalf of writer and reader logins. Before they pinned
// search_path, an unqualified table name in them resolved to the caller's pg_temp first (PostgreSQL searches pg_temp
// before every schema it is not told to search last), so a writer could shadow the sequence ledger with a temp table
// whose trigger ran its own code as the admin. These tests run that attack, as real LOGIN roles, and audit every
// definer function of the schema: pinned search_path, owner, and who may EXECUTE it.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRoles, type QueueRoles } from '../../../src/store/roles.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'
import { dropTestRoles } from '../../helpers/roles.js'

const t = useTestKafka('security_definer')
const PREFIX = 'metadata_queue'
const password = `pw-${randomBytes(6).toString('hex')}`
const SECRET = `secret-${randomBytes(6).toString('hex')}`
let roles: QueueRoles
let logins: { writer: string; reader: string }
let topicId: string
const clients: pg.Client[] = []

const S = () => `"${t.db.schema}"`
const T = (suffix: string) => `${S()}."${PREFIX}_${suffix}"`

async function sqlAs(user: string): Promise<pg.Client> {
  const u = new URL(t.db.connectionString)
  u.username = user
  u.password = password
  const c = new pg.Client({ connectionString: u.toString() })
  c.on('error', () => undefined)
  await c.connect()
  clients.push(c)
  return c
}

/**
 * What the attacker's code would do as whoever runs it: note the effective role and the secret in session settings
 * (readable afterwards by the attacker), and grant the attacking login read/delete on messages and offsets.
 */
const EVIL_BODY = `
  BEGIN
    PERFORM set_config('attack.ran_as', current_user::text, false);
    PERFORM set_config('attack.secret', (SELECT s FROM ${'%VAULT%'} LIMIT 1), false);
    EXECUTE format('GRANT SELECT, DELETE ON %MESSAGE%, %OFFSETS% TO %I', session_user);
    RETURN NEW;
  END`

async function plantEvil(c: pg.Client): Promise<void> {
  const body = EVIL_BODY.replace('%VAULT%', `${S()}.vault`).replace('%MESSAGE%', T('message')).replace('%OFFSETS%', T('consumer_offset'))
  await c.query(`CREATE FUNCTION pg_temp.evil() RETURNS trigger LANGUAGE plpgsql AS $fn$${body}$fn$`)
}

async function attackOutcome(c: pg.Client, login: string) {
  // neither runtime role may DELETE messages or offsets
  const { rows } = await c.query<{ ran_as: string | null; secret: string | null; deleteMessages: boolean; deleteOffsets: boolean }>(
    `SELECT nullif(current_setting('attack.ran_as', true), '') AS ran_as, nullif(current_setting('attack.secret', true), '') AS secret,
            has_table_privilege($1, $2, 'DELETE') AS "deleteMessages", has_table_privilege($1, $3, 'DELETE') AS "deleteOffsets"`,
    [login, T('message'), T('consumer_offset')],
  )
  return rows[0]!
}

beforeAll(async () => {
  const admin = t.kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic: uniqueName('definer'), numPartitions: 1 }] })
  await admin.disconnect()
  topicId = (await t.db.pool.query(`SELECT id::text FROM ${T('topic')} LIMIT 1`)).rows[0].id
  // a table only the admin may read: what the attacker wants
  await t.db.pool.query(`CREATE TABLE ${S()}.vault (s text)`)
  await t.db.pool.query(`INSERT INTO ${S()}.vault VALUES ($1)`, [SECRET])
  roles = await createRoles(t.db.pool, { schema: t.db.schema, prefix: PREFIX, rolePrefix: t.db.schema })
  logins = { writer: `${t.db.schema}_dw`, reader: `${t.db.schema}_dr` }
  await t.db.pool.query(`CREATE ROLE "${logins.writer}" LOGIN PASSWORD '${password}' IN ROLE "${roles.writer}"`)
  await t.db.pool.query(`CREATE ROLE "${logins.reader}" LOGIN PASSWORD '${password}' IN ROLE "${roles.reader}"`)
})

afterAll(async () => {
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)))
  await dropTestRoles(t.db.pool, [...Object.values(logins ?? {}), ...Object.values(roles ?? {})])
})

describe('SECURITY DEFINER functions', () => {
  it('the writer cannot run code as the admin by shadowing the sequence ledger in pg_temp (deferred seq trigger)', async () => {
    const w = await sqlAs(logins.writer)
    await plantEvil(w)
    await w.query(`CREATE TEMP TABLE ${PREFIX}_partition_seq (LIKE ${T('partition_seq')})`)
    await w.query(`INSERT INTO pg_temp.${PREFIX}_partition_seq SELECT * FROM ${T('partition_seq')}`)
    await w.query(`UPDATE pg_temp.${PREFIX}_partition_seq SET next_seq = 1`) // the fake ledger hands out seq 1 again
    await w.query(`GRANT ALL ON pg_temp.${PREFIX}_partition_seq TO PUBLIC`) // so the admin role may update it
    await w.query(`CREATE TRIGGER evil BEFORE UPDATE ON pg_temp.${PREFIX}_partition_seq FOR EACH ROW EXECUTE FUNCTION pg_temp.evil()`)
    const insert = `INSERT INTO ${T('message')} (topic_id, partition_id, routing_key, enqueue_seq, payload)
                    VALUES ($1, 0, 'k', -nextval('${T('provisional_seq')}'), '\\x01')`
    for (let i = 0; i < 3; i++) {
      // each COMMIT fires the deferred trigger, which allocates from "the" ledger as the admin role
      await w.query('BEGIN')
      await w.query(insert, [topicId])
      await w.query('COMMIT')
    }
    const outcome = await attackOutcome(w, logins.writer)
    console.log(`definer: writer attack outcome ${JSON.stringify(outcome)}`)
    expect(outcome).toEqual({ ran_as: null, secret: null, deleteMessages: false, deleteOffsets: false })
    // the real ledger numbered the rows: 1, 2, 3 and the ledger's next is 4 (not 1, 2, 1 from the fake one)
    const { rows } = await t.db.pool.query(
      `SELECT array_agg(enqueue_seq::int ORDER BY id) AS seqs, (SELECT next_seq::int FROM ${T('partition_seq')} WHERE topic_id = $1 AND partition_id = 0) AS next
       FROM ${T('message')} WHERE topic_id = $1`,
      [topicId],
    )
    expect(rows[0]).toEqual({ seqs: [1, 2, 3], next: 4 })
  })

  it('the reader cannot run code as the admin by shadowing the tables ensure_partitions touches', async () => {
    const r = await sqlAs(logins.reader)
    await plantEvil(r)
    for (const suffix of ['message', 'partition_seq', 'topic']) {
      await r.query(`CREATE TEMP TABLE ${PREFIX}_${suffix} (LIKE ${T(suffix)})`)
      await r.query(`GRANT ALL ON pg_temp.${PREFIX}_${suffix} TO PUBLIC`)
      await r.query(`CREATE TRIGGER evil BEFORE INSERT OR UPDATE ON pg_temp.${PREFIX}_${suffix} FOR EACH ROW EXECUTE FUNCTION pg_temp.evil()`)
    }
    const before = await t.db.pool.query(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = $1::regclass`, [T('message')])
    const err = await r.query(`SELECT ${T('ensure_partitions')}(now() + interval '2 days')`).then(
      () => undefined,
      (e: Error) => e.message,
    )
    const outcome = await attackOutcome(r, logins.reader)
    const after = await t.db.pool.query(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = $1::regclass`, [T('message')])
    console.log(
      `definer: reader attack error=${err ?? 'none'} outcome ${JSON.stringify(outcome)} real partitions ${before.rows[0].n} -> ${after.rows[0].n}`,
    )
    expect(err).toBeUndefined()
    expect(outcome).toEqual({ ran_as: null, secret: null, deleteMessages: false, deleteOffsets: false })
    // the partitions went to the real message table, none to the reader's temp one
    expect(after.rows[0].n).toBeGreaterThanOrEqual(before.rows[0].n)
    const { rows: temp } = await r.query(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'pg_temp.${PREFIX}_message'::regclass`)
    expect(temp[0].n).toBe(0)
  })

  it('the reader may not call the definer functions that allocate sequence numbers (a burnt seq is a gap that stalls consumers)', async () => {
    const r = await sqlAs(logins.reader)
    const ledger = async () =>
      (await t.db.pool.query(`SELECT next_seq::text AS n FROM ${T('partition_seq')} WHERE topic_id = $1 AND partition_id = 0`, [topicId])).rows[0].n
    const before = await ledger()
    const { rows } = await t.db.pool.query(
      `SELECT p.proname AS name FROM pg_proc p WHERE p.pronamespace = $1::regnamespace AND p.prosecdef
         AND p.prorettype <> 'trigger'::regtype AND has_function_privilege($2, p.oid, 'EXECUTE') ORDER BY 1`,
      [t.db.schema, logins.reader],
    )
    console.log(`definer: definer functions the reader may call: ${rows.map((x) => x.name).join(', ')}`)
    // number_outbox allocates exactly the seqs of the committed staged rows it moves: no gap, any client may drive it;
    // read_horizon reads pg_stat_activity as its owner and writes nothing (docs/decisions/scale-011-read-horizon.md)
    expect(rows.map((x) => x.name)).toEqual([`${PREFIX}_ensure_partitions`, `${PREFIX}_number_outbox`, `${PREFIX}_read_horizon`])
    for (const fn of ['allocate_seq', 'defer_partition']) {
      const exists = await t.db.pool.query('SELECT 1 FROM pg_proc WHERE pronamespace = $1::regnamespace AND proname = $2', [
        t.db.schema,
        `${PREFIX}_${fn}`,
      ])
      if (!exists.rowCount) continue
      const args = fn === 'allocate_seq' ? '$1, 0, 1000' : '$1, 0'
      const err = await r.query(`SELECT * FROM ${T(fn)}(${args})`, [topicId]).then(
        () => undefined,
        (e: { code?: string }) => e.code,
      )
      expect(err, fn).toBe('42501')
    }
    expect(await ledger()).toBe(before)
  })

  it('every SECURITY DEFINER function pins search_path to pg_catalog, the schema, pg_temp; is owned by the admin; EXECUTE only where needed', async () => {
    const { rows } = await t.db.pool.query<{ name: string; config: string[] | null; owner: string; trigger: boolean; grantees: string[] }>(
      `SELECT p.proname AS name, p.proconfig AS config, p.proowner::regrole::text AS owner, p.prorettype = 'trigger'::regtype AS trigger,
              coalesce((SELECT array_agg(CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END ORDER BY 1)
                        FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a WHERE a.privilege_type = 'EXECUTE'), '{}') AS grantees
       FROM pg_proc p WHERE p.pronamespace = $1::regnamespace AND p.prosecdef ORDER BY 1`,
      [t.db.schema],
    )
    console.log(
      `definer: ${rows.length} SECURITY DEFINER functions: ${rows.map((r) => `${r.name} ${JSON.stringify(r.config)} -> ${r.grantees.join(',')}`).join('; ')}`,
    )
    // ensure_partitions and the deferred-seq trigger at least: the audit is not vacuous
    expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining([`${PREFIX}_ensure_partitions`]))
    expect(rows.length).toBeGreaterThanOrEqual(2)
    for (const fn of rows) {
      const path = (fn.config ?? []).find((c) => c.startsWith('search_path='))
      expect(path, `${fn.name} has no pinned search_path`).toBeDefined()
      const entries = path!
        .slice('search_path='.length)
        .split(',')
        .map((s) => s.trim().replace(/^"(.*)"$/, '$1'))
      expect(entries, fn.name).toEqual(['pg_catalog', t.db.schema, 'pg_temp'])
      expect(fn.owner, fn.name).toBe(roles.admin)
      // trigger functions are never called directly; the others only by the runtime roles
      const allowed = fn.trigger ? [roles.admin] : [roles.admin, roles.reader, roles.writer].sort()
      expect(
        fn.grantees.filter((g) => !allowed.includes(g)),
        `${fn.name} EXECUTE`,
      ).toEqual([])
      expect(fn.grantees).not.toContain('PUBLIC')
    }
    // and no function of the schema runs as a superuser
    const { rows: superOwned } = await t.db.pool.query(
      `SELECT p.proname FROM pg_proc p JOIN pg_roles r ON r.oid = p.proowner WHERE p.pronamespace = $1::regnamespace AND p.prosecdef AND r.rolsuper`,
      [t.db.schema],
    )
    expect(superOwned).toEqual([])
  })

  it('createRoles takes back what an escalation could have planted: direct grants, default privileges, extra definer functions', async () => {
    const login = logins.writer
    const partition = (
      await t.db.pool.query(`SELECT inhrelid::regclass::text AS p FROM pg_inherits WHERE inhparent = $1::regclass LIMIT 1`, [T('message')])
    ).rows[0].p
    const backdoor = `${S()}.backdoor()`
    // what code running as the admin role could leave behind
    const plant = await t.db.connect()
    await plant.query(`SET ROLE "${roles.admin}"`)
    await plant.query(`GRANT SELECT, DELETE ON ${T('message')}, ${T('consumer_offset')} TO "${login}"`)
    await plant.query(`GRANT SELECT (payload) ON ${T('message')} TO "${login}"`)
    await plant.query(`GRANT SELECT ON ${partition} TO PUBLIC`)
    await plant.query(`GRANT CREATE ON SCHEMA ${S()} TO "${login}"`)
    await plant.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA ${S()} GRANT SELECT, DELETE ON TABLES TO "${login}"`)
    await plant.query(`ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO "${roles.writer}"`)
    await plant.query(`CREATE FUNCTION ${backdoor} RETURNS void LANGUAGE sql SECURITY DEFINER AS 'DELETE FROM ${T('consumer_offset')}'`)
    await plant.query(`GRANT EXECUTE ON FUNCTION ${backdoor} TO "${login}"`)
    await plant.query('RESET ROLE')
    const state = async () =>
      (
        await t.db.pool.query(
          `SELECT has_table_privilege($1, $2, 'SELECT') AS "readMessages", has_table_privilege($1, $3, 'DELETE') AS "deleteOffsets",
                  has_column_privilege($1, $2, 'payload', 'SELECT') AS "readPayload", has_table_privilege('public', $4, 'SELECT') AS "publicPartition",
                  has_schema_privilege($1, $5, 'CREATE') AS "createInSchema", has_function_privilege($1, $6, 'EXECUTE') AS "runBackdoor",
                  (SELECT prosecdef FROM pg_proc WHERE oid = $6::regprocedure) AS "backdoorDefiner",
                  (SELECT count(*)::int FROM pg_default_acl WHERE defaclrole = $7::regrole) AS "defaultAcls"`,
          [login, T('message'), T('consumer_offset'), partition, t.db.schema, backdoor, `"${roles.admin}"`],
        )
      ).rows[0]
    const planted = {
      readMessages: true,
      deleteOffsets: true,
      readPayload: true,
      publicPartition: true,
      createInSchema: true,
      runBackdoor: true,
      backdoorDefiner: true,
      defaultAcls: 2,
    }
    expect(await state()).toEqual(planted)
    // keepOtherGrants: the behaviour before this was fixed; the grants to the login survive
    const log: string[] = []
    await createRoles(t.db.pool, {
      schema: t.db.schema,
      prefix: PREFIX,
      rolePrefix: t.db.schema,
      keepOtherGrants: true,
      log: (m) => void log.push(m),
    })
    expect(await state()).toMatchObject({ readMessages: true, deleteOffsets: true, publicPartition: true, defaultAcls: 2 })
    await createRoles(t.db.pool, { schema: t.db.schema, prefix: PREFIX, rolePrefix: t.db.schema, log: (m) => void log.push(m) })
    console.log(`definer: createRoles cleanup log:\n  ${log.join('\n  ')}`)
    expect(await state()).toEqual({
      readMessages: false,
      deleteOffsets: false,
      readPayload: false,
      publicPartition: false,
      createInSchema: false,
      runBackdoor: false,
      backdoorDefiner: false,
      defaultAcls: 0,
    })
    expect(log.join('\n')).toMatch(/backdoor\(\) was SECURITY DEFINER/)
    // and the runtime grants are what they were: the writer still allocates through the pinned definer function
    const w = await sqlAs(login)
    await w.query('BEGIN')
    await w.query(
      `INSERT INTO ${T('message')} (topic_id, partition_id, routing_key, enqueue_seq, payload) VALUES ($1, 0, 'k', -nextval('${T('provisional_seq')}'), '\\x02')`,
      [topicId],
    )
    await w.query('COMMIT')
  })
})
