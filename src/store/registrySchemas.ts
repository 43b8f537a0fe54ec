// Schema rows (one per global id) and their references.
import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import type { SchemaReference, StoredSchema } from './registryTypes.js'
import { registryTables } from './registryTables.js'
import { statements } from './statement.js'

const REFERENCES = (r: ReturnType<typeof registryTables>, id: string) => `COALESCE((
    SELECT jsonb_agg(jsonb_build_object('name', x.name, 'subject', x.subject, 'version', x.version) ORDER BY x.position)
    FROM ${r.reference} x WHERE x.schema_id = ${id}), '[]'::jsonb)`

/** A schema row and its references in one statement; with `withId` the id is given ($7), else generated. */
const insertStatement = (r: ReturnType<typeof registryTables>, withId: boolean) => `
      WITH ins AS (
        INSERT INTO ${r.schema} (${withId ? 'id, ' : ''}schema_type, schema_text, canonical_hash) VALUES (${withId ? '$7, ' : ''}$1, $2, $3)
        ON CONFLICT DO NOTHING
        RETURNING id
      ), refs AS (
        INSERT INTO ${r.reference} (schema_id, position, name, subject, version)
        SELECT ins.id, x.ord::int, x.name, x.subject, x.version
        FROM ins, unnest($4::text[], $5::text[], $6::int[]) WITH ORDINALITY AS x(name, subject, version, ord)
      )
      SELECT id FROM ins`

const sql = statements('registrySchemas', (t) => {
  const r = registryTables(t)
  return {
    idByHash: `SELECT id FROM ${r.schema} WHERE canonical_hash = $1`,
    // The row and its references in one statement; a concurrent insert of the same hash makes this return no
    // row (the caller reads the winner's id with idByHash, which sees it once that transaction commits). So does
    // an id taken by an imported schema since the identity sequence last moved: the caller draws again.
    insert: insertStatement(r, false),
    // IMPORT mode: the id comes with the schema. No row when the id or the hash is taken.
    insertWithId: insertStatement(r, true),
    // After an imported id, generated ids continue above it (never moved back: others may have drawn past it).
    advanceIds: `
      SELECT setval(q.seq, GREATEST($1::bigint, COALESCE(pg_sequence_last_value(q.seq::regclass), 1)))
      FROM (SELECT pg_get_serial_sequence($2, 'id') AS seq) q`,
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
export interface SchemaRow {
  schemaType: string
  schema: string
  hash: string
  references: readonly SchemaReference[]
}

export async function insertSchema(db: Queryable, t: Tables, row: SchemaRow): Promise<number | undefined> {
  return (await run<{ id: number }>(db, sql(t).insert, schemaParams(row))).rows[0]?.id
}

/** Inserts the schema under the given id (IMPORT mode); false when the id or the hash is taken. */
export async function insertSchemaWithId(db: Queryable, t: Tables, row: SchemaRow, id: number): Promise<boolean> {
  const inserted = (await run(db, sql(t).insertWithId, [...schemaParams(row), id])).rowCount === 1
  if (inserted) await run(db, sql(t).advanceIds, [id, registryTables(t).schema])
  return inserted
}

function schemaParams(row: SchemaRow): unknown[] {
  const refs = row.references
  return [row.schemaType, row.schema, row.hash, refs.map((x) => x.name), refs.map((x) => x.subject), refs.map((x) => x.version)]
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
