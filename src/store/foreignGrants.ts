// Privileges on the queue schema held by roles other than the three queue roles (and each object's owner): a login
// granted SELECT on messages directly, a partition readable by PUBLIC, default privileges that hand every future
// partition to someone. createRoles revokes them (unless told to keep them), so the three roles stay the only way
// in and whatever a past escalation granted does not outlive the next createRoles run.
import type pg from 'pg'
import { quoteIdent } from '../db/identifiers.js'

type Runner = Pick<pg.ClientBase, 'query'>

/** REVOKE target kinds by pg_default_acl.defaclobjtype. */
const DEFAULT_ACL_KINDS: Record<string, string> = { r: 'TABLES', S: 'SEQUENCES', f: 'ROUTINES', T: 'TYPES', n: 'SCHEMAS' }

/**
 * Revokes every privilege on the schema, its relations (partitions and columns included), sequences and routines
 * from grantees outside `keep` (PUBLIC included, owners excepted), and every default privilege set in the schema or
 * by the admin role. Returns one line per revocation, for the log.
 */
export async function revokeForeignGrants(q: Runner, schema: string, keep: string[], admin: string): Promise<string[]> {
  const { rows } = await q.query<{ kind: string; name: string; grantee: string }>(
    `WITH objects AS (
       SELECT CASE WHEN c.relkind = 'S' THEN 'SEQUENCE' ELSE 'TABLE' END AS kind,
              format('%I.%I', n.nspname, c.relname) AS name, c.relacl AS acl, c.relowner AS owner
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
       UNION ALL
       SELECT 'TABLE', format('%I.%I', n.nspname, c.relname), a.attacl, c.relowner
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND a.attacl IS NOT NULL
       UNION ALL
       SELECT 'ROUTINE', p.oid::regprocedure::text, p.proacl, p.proowner
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.prokind IN ('f', 'p', 'w')
       UNION ALL
       SELECT 'SCHEMA', quote_ident(nspname), nspacl, nspowner FROM pg_namespace WHERE nspname = $1
     )
     SELECT DISTINCT o.kind, o.name, CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END AS grantee
     FROM objects o, aclexplode(o.acl) a
     WHERE a.grantee <> o.owner AND a.grantee NOT IN (SELECT oid FROM pg_roles WHERE rolname = ANY($2::text[]))
     ORDER BY 1, 2, 3`,
    [schema, keep],
  )
  const done: string[] = []
  for (const r of rows) {
    await q.query(`REVOKE ALL ON ${r.kind} ${r.name} FROM ${r.grantee}`)
    done.push(`revoked ${r.kind.toLowerCase()} ${r.name} from ${r.grantee}`)
  }
  const { rows: defaults } = await q.query<{ owner: string; type: string; global: boolean; grantee: string }>(
    `SELECT DISTINCT d.defaclrole::regrole::text AS owner, d.defaclobjtype::text AS type, d.defaclnamespace = 0 AS global,
            CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END AS grantee
     FROM pg_default_acl d, aclexplode(d.defaclacl) a
     WHERE (d.defaclnamespace = $1::regnamespace OR (d.defaclnamespace = 0 AND d.defaclrole = $2::regrole)) AND a.grantee <> d.defaclrole`,
    [quoteIdent(schema), quoteIdent(admin)],
  )
  for (const d of defaults) {
    const kind = DEFAULT_ACL_KINDS[d.type]
    if (!kind) continue
    const where = d.global ? '' : ` IN SCHEMA ${quoteIdent(schema)}`
    await q.query(`ALTER DEFAULT PRIVILEGES FOR ROLE ${d.owner}${where} REVOKE ALL ON ${kind} FROM ${d.grantee}`)
    done.push(`revoked default privileges on ${kind.toLowerCase()} of ${d.owner}${where} from ${d.grantee}`)
  }
  return done
}
