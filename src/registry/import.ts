// Confluent's IMPORT mode, used to move a registry here keeping its ids and versions: a registration that brings
// its own id (and optionally its version) stores exactly those, without compatibility checks. Entering IMPORT
// needs a scope (the subject, or for the global mode the whole registry) with no live version, unless forced;
// soft-deleted versions left in it are removed permanently first, as Confluent does. One rule is stricter than
// Confluent: an id never changes meaning and a schema keeps one id, so an id already holding another schema, a
// schema already stored under another id, and a version number already taken are refused (42205), not overwritten.
import type pg from 'pg'
import type { Database } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { GLOBAL_SUBJECT } from '../store/registryConfig.js'
import { effectiveMode, getMode, setMode } from '../store/registryMode.js'
import { findSchemaById, findSchemaIdByHash, insertSchemaWithId } from '../store/registrySchemas.js'
import { transaction } from '../store/transactions.js'
import {
  deleteVersion,
  insertVersion,
  insertVersionAt,
  listVersions,
  lockRegistry,
  lockSubject,
  schemasReferencing,
  subjectVersions,
} from '../store/registryVersions.js'
import { schemaHash } from './canonical.js'
import { operationNotPermitted, referenceExists } from './errors.js'
import type { PreparedSchema } from './resolver.js'

/** PUT /mode[/{s}] {"mode": "IMPORT"}[?force=true] */
export async function enterImportMode(db: Database, t: Tables, subject: string | undefined, force: boolean): Promise<void> {
  await transaction(db, async (client) => {
    if (subject === undefined) await lockRegistry(client, t)
    else await lockSubject(client, t, subject)
    const current = subject === undefined ? await getMode(client, t, GLOBAL_SUBJECT) : await effectiveMode(client, t, subject)
    if (current !== 'IMPORT' && !force) await emptyScope(client, t, subject)
    await setMode(client, t, subject ?? GLOBAL_SUBJECT, 'IMPORT')
  })
}

/** Refuses a scope with live versions; permanently deletes its soft-deleted ones (42206 while referenced). */
async function emptyScope(client: pg.PoolClient, t: Tables, subject: string | undefined): Promise<void> {
  const rows =
    subject === undefined
      ? await listVersions(client, t, { deleted: true, prefix: '', latestOnly: false })
      : await subjectVersions(client, t, subject, true)
  if (rows.some((v) => !v.deleted)) throw operationNotPermitted('Cannot import since found existing subjects')
  for (const v of rows) {
    const users = await schemasReferencing(client, t, v.subject, [v.version], true)
    if (users.length > 0) throw referenceExists(v.subject, v.version, users)
  }
  for (const v of rows) await deleteVersion(client, t, v.subject, v.version, true)
}

/**
 * Registration in IMPORT mode (the caller holds the subject lock and checked the mode). Without a version the
 * subject's next number is used, and a subject already holding the id live answers with that version.
 */
export async function importVersion(
  client: pg.PoolClient,
  t: Tables,
  subject: string,
  prepared: PreparedSchema,
  id: number,
  version: number | undefined,
): Promise<{ id: number; version: number }> {
  await storeSchemaAs(client, t, prepared, id)
  const versions = await subjectVersions(client, t, subject, true)
  if (version === undefined) {
    const same = versions.find((v) => v.id === id && !v.deleted)
    return { id, version: same?.version ?? (await insertVersion(client, t, subject, id)) }
  }
  const taken = versions.find((v) => v.version === version)
  if (taken?.id === id && !taken.deleted) return { id, version }
  if (taken) {
    throw operationNotPermitted(
      `Version ${version} of subject '${subject}' already exists${taken.deleted ? ' (soft-deleted)' : ''} with id ${taken.id}`,
    )
  }
  await insertVersionAt(client, t, subject, version, id)
  return { id, version }
}

/** The schema row under `id`: already there with this schema, or new. */
async function storeSchemaAs(client: pg.PoolClient, t: Tables, prepared: PreparedSchema, id: number): Promise<void> {
  const row = { schemaType: prepared.schemaType, schema: prepared.canonical, hash: prepared.hash, references: prepared.references }
  for (let attempt = 0; attempt < 2; attempt++) {
    const existing = await findSchemaById(client, t, id, true)
    if (existing) {
      // stored text is canonical, so its hash is the one it was stored under
      if (schemaHash(existing.schemaType, existing.schema, existing.references) === prepared.hash) return
      throw operationNotPermitted(`Overwrite new schema with id ${id} is not permitted.`)
    }
    const other = await findSchemaIdByHash(client, t, prepared.hash)
    if (other !== undefined) {
      throw operationNotPermitted(
        `The schema is already stored with id ${other}; this registry keeps one id per schema, so it cannot also take id ${id}`,
      )
    }
    if (await insertSchemaWithId(client, t, row, id)) return
    // a concurrent import took the id or the hash between our reads and the insert: read again
  }
  throw operationNotPermitted(`Schema id ${id} is being imported concurrently; retry`)
}
