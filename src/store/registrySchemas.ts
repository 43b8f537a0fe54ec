// Schema rows (one per global id) and their references.
import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import type { SchemaReference, StoredSchema } from '../registry/types.js'
import { registryTables } from './registryTables.js'
import { statements } from './statement.js'

const REFERENCES = (r: ReturnType<typeof registryTables>, id: string) => `COALESCE((
    SELECT jsonb_agg(jsonb_build_object('name', x.name, 'subject', x.subject, 'version', x.version) ORDER BY x.position)
    FROM ${r.reference} x WHERE x.schema_id = ${id}), '[]'::jsonb)`

const sql = statements((t) => {
  const r = registryTables(t)
  return {
    idByHash: `SELECT id FROM ${r.schema} WHERE canonical_hash = $1`,
    // The row and its references in one statement; a concurrent insert of the same hash makes this return no
    // row (the caller reads the winner's id with idByHash, which sees it once that transaction commits).
    insert: `
      WITH ins AS (
        INSERT INTO ${r.schema} (schema_type, schema_text, canonical_hash) VALUES ($1, $2, $3)
        ON CONFLICT (canonical_hash) DO NOTHING
        RETURNING id
      ), refs AS (
        INSERT INTO ${r.reference} (schema_id, position, name, subject, version)
        SELECT ins.id, x.ord::int, x.name, x.subject, x.version
        FROM ins, unnest($4::text[], $5::text[], $6::int[]) WITH ORDINALITY AS x(name, subject, version, ord)
      )
      SELECT id FROM ins`,
    // Ids stay visible while any version (soft-deleted included) uses them, as in Confluent.
    byId: `
      SELECT s.id, s.schema_type AS "schemaType", s.schema_text AS schema, ${REFERENCES(r, 's.id')} AS "references"
      FROM ${r.schema} s
      WHERE s.id = $1 AND EXISTS (SELECT 1 FROM ${r.version} v WHERE v.schema_id = s.id)`,
    // Any row, used or not: parsing a version needs its schema even while other rows change.
    anyById: `
      SELECT s.id, s.schema_type AS "schemaType", s.schema_text AS schema, ${REFERENCES(r, 's.id')} AS "references"
      FROM ${r.schema} s WHERE s.id = $1`,
    subjectsOf: `
      SELECT DISTINCT subject FROM ${r.version} WHERE schema_id = $1 AND ($2 OR NOT deleted) ORDER BY subject`,
    versionsOf: `
      SELECT subject, version FROM ${r.version} WHERE schema_id = $1 AND ($2 OR NOT deleted) ORDER BY subject, version`,
  }
})

export async function findSchemaIdByHash(db: Queryable, t: Tables, hash: string): Promise<number | undefined> {
  return (await run<{ id: number }>(db, sql(t).idByHash, [hash])).rows[0]?.id
}

/** Inserts the schema unless its hash exists; returns the new id, or undefined when another row has the hash. */
export async function insertSchema(
  db: Queryable,
  t: Tables,
  row: { schemaType: string; schema: string; hash: string; references: readonly SchemaReference[] },
): Promise<number | undefined> {
  const res = await run<{ id: number }>(db, sql(t).insert, [
    row.schemaType,
    row.schema,
    row.hash,
    row.references.map((x) => x.name),
    row.references.map((x) => x.subject),
    row.references.map((x) => x.version),
  ])
  return res.rows[0]?.id
}

export async function findSchemaById(db: Queryable, t: Tables, id: number, includeUnused = false): Promise<StoredSchema | undefined> {
  return (await run<StoredSchema>(db, includeUnused ? sql(t).anyById : sql(t).byId, [id])).rows[0]
}

export async function subjectsForSchemaId(db: Queryable, t: Tables, id: number, deleted: boolean): Promise<string[]> {
  return (await run<{ subject: string }>(db, sql(t).subjectsOf, [id, deleted])).rows.map((x) => x.subject)
}

export async function versionsForSchemaId(
  db: Queryable,
  t: Tables,
  id: number,
  deleted: boolean,
): Promise<Array<{ subject: string; version: number }>> {
  return (await run<{ subject: string; version: number }>(db, sql(t).versionsOf, [id, deleted])).rows
}
