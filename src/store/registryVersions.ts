// Subject versions: numbering, lookups, soft and permanent deletes.
import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import type { SubjectVersion } from './registryTypes.js'
import { registryTables } from './registryTables.js'
import { statements } from './statement.js'

/** A version with its schema's canonical hash (to spot a re-registration). */
export interface VersionRow extends SubjectVersion {
  hash: string
}

const sql = statements('registryVersions', (t) => {
  const r = registryTables(t)
  const columns = `v.subject, v.version, v.deleted, s.id, s.schema_type AS "schemaType", s.schema_text AS schema,
    s.canonical_hash AS hash, COALESCE((
      SELECT jsonb_agg(jsonb_build_object('name', x.name, 'subject', x.subject, 'version', x.version) ORDER BY x.position)
      FROM ${r.reference} x WHERE x.schema_id = s.id), '[]'::jsonb) AS "references"`
  const from = `${r.version} v JOIN ${r.schema} s ON s.id = v.schema_id`
  return {
    // Serialises writers of one subject (version numbering, compatibility against the latest) across processes.
    // Each first takes the registry-wide key shared, so a registry-wide change (global IMPORT) can exclude them all.
    lock: `SELECT pg_advisory_xact_lock_shared(hashtextextended($2, 0)), pg_advisory_xact_lock(hashtextextended($1, 0))`,
    lockRegistry: `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
    all: `SELECT ${columns} FROM ${from} WHERE v.subject = $1 AND ($2 OR NOT v.deleted) ORDER BY v.version`,
    one: `SELECT ${columns} FROM ${from} WHERE v.subject = $1 AND v.version = $2`,
    // Numbers keep counting past soft- and permanently deleted versions, as in Confluent: the subject's high-water
    // mark only grows (the caller holds the subject lock).
    insert: `
      WITH hw AS (
        INSERT INTO ${r.subject} AS s (subject, last_version)
        SELECT $1, COALESCE(max(v.version), 0) + 1 FROM ${r.version} v WHERE v.subject = $1
        ON CONFLICT (subject) DO UPDATE SET last_version = GREATEST(s.last_version + 1, EXCLUDED.last_version)
        RETURNING last_version
      )
      INSERT INTO ${r.version} (subject, version, schema_id)
      SELECT $1, hw.last_version, $2 FROM hw
      RETURNING version`,
    // An imported version keeps its number; the high-water mark only grows past it.
    insertAt: `
      WITH hw AS (
        INSERT INTO ${r.subject} AS s (subject, last_version) VALUES ($1, $2)
        ON CONFLICT (subject) DO UPDATE SET last_version = GREATEST(s.last_version, EXCLUDED.last_version)
      )
      INSERT INTO ${r.version} (subject, version, schema_id) VALUES ($1, $2, $3)`,
    // The number the next registration gets (as `insert` computes it).
    next: `
      SELECT GREATEST(
        (SELECT last_version FROM ${r.subject} WHERE subject = $1),
        (SELECT max(version) FROM ${r.version} WHERE subject = $1),
        0) + 1 AS version`,
    subjects: `
      SELECT DISTINCT subject FROM ${r.version}
      WHERE ($1 OR NOT deleted) AND starts_with(subject, $2) ORDER BY subject`,
    listing: `
      SELECT ${columns} FROM ${from}
      WHERE ($1 OR NOT v.deleted) AND starts_with(v.subject, $2)
        AND (NOT $3 OR v.version = (SELECT max(w.version) FROM ${r.version} w
                                    WHERE w.subject = v.subject AND ($1 OR NOT w.deleted)))
      ORDER BY v.subject, v.version`,
    softDeleteSubject: `UPDATE ${r.version} SET deleted = true WHERE subject = $1 AND NOT deleted RETURNING version`,
    hardDeleteSubject: `DELETE FROM ${r.version} WHERE subject = $1 RETURNING version`,
    softDeleteVersion: `UPDATE ${r.version} SET deleted = true WHERE subject = $1 AND version = $2`,
    hardDeleteVersion: `DELETE FROM ${r.version} WHERE subject = $1 AND version = $2`,
    // Schemas whose references point at these versions of the subject, used by a live version (or, with $3, by
    // any version, soft-deleted included: such an id still resolves and must keep meaning the same schema).
    referencedBy: `
      SELECT DISTINCT x.schema_id AS id FROM ${r.reference} x
      WHERE x.subject = $1 AND x.version = ANY($2::int[])
        AND EXISTS (SELECT 1 FROM ${r.version} v WHERE v.schema_id = x.schema_id AND ($3 OR NOT v.deleted))
      ORDER BY 1`,
  }
})

const registryKey = (t: Tables) => `kafkajs-pgqueue:registry:${t.schema}.${t.prefix}`

export async function lockSubject(db: Queryable, t: Tables, subject: string): Promise<void> {
  await run(db, sql(t).lock, [`${registryKey(t)}:${subject}`, registryKey(t)])
}

/** Waits for every subject writer to finish and keeps new ones out until the transaction ends. */
export async function lockRegistry(db: Queryable, t: Tables): Promise<void> {
  await run(db, sql(t).lockRegistry, [registryKey(t)])
}

/** Versions oldest first; soft-deleted ones only with `deleted`. */
export async function subjectVersions(db: Queryable, t: Tables, subject: string, deleted: boolean): Promise<VersionRow[]> {
  return (await run<VersionRow>(db, sql(t).all, [subject, deleted])).rows
}

export async function subjectVersion(db: Queryable, t: Tables, subject: string, version: number): Promise<VersionRow | undefined> {
  return (await run<VersionRow>(db, sql(t).one, [subject, version])).rows[0]
}

export async function insertVersion(db: Queryable, t: Tables, subject: string, schemaId: number): Promise<number> {
  return (await run<{ version: number }>(db, sql(t).insert, [subject, schemaId])).rows[0]!.version
}

/** Stores a version under the number it was given (IMPORT mode; the caller checked it is free). */
export async function insertVersionAt(db: Queryable, t: Tables, subject: string, version: number, schemaId: number): Promise<void> {
  await run(db, sql(t).insertAt, [subject, version, schemaId])
}

export async function nextVersion(db: Queryable, t: Tables, subject: string): Promise<number> {
  return (await run<{ version: number }>(db, sql(t).next, [subject])).rows[0]!.version
}

export async function listSubjects(db: Queryable, t: Tables, deleted: boolean, prefix = ''): Promise<string[]> {
  return (await run<{ subject: string }>(db, sql(t).subjects, [deleted, prefix])).rows.map((x) => x.subject)
}

export async function listVersions(db: Queryable, t: Tables, opts: { deleted: boolean; prefix: string; latestOnly: boolean }): Promise<VersionRow[]> {
  return (await run<VersionRow>(db, sql(t).listing, [opts.deleted, opts.prefix, opts.latestOnly])).rows
}

export async function softDeleteSubject(db: Queryable, t: Tables, subject: string): Promise<number[]> {
  return (await run<{ version: number }>(db, sql(t).softDeleteSubject, [subject])).rows.map((x) => x.version).sort((a, b) => a - b)
}

export async function hardDeleteSubject(db: Queryable, t: Tables, subject: string): Promise<number[]> {
  return (await run<{ version: number }>(db, sql(t).hardDeleteSubject, [subject])).rows.map((x) => x.version).sort((a, b) => a - b)
}

export async function deleteVersion(db: Queryable, t: Tables, subject: string, version: number, permanent: boolean): Promise<void> {
  await run(db, permanent ? sql(t).hardDeleteVersion : sql(t).softDeleteVersion, [subject, version])
}

export async function schemasReferencing(
  db: Queryable,
  t: Tables,
  subject: string,
  versions: number[],
  includeSoftDeleted = false,
): Promise<number[]> {
  return (await run<{ id: number }>(db, sql(t).referencedBy, [subject, versions, includeSoftDeleted])).rows.map((x) => x.id)
}
