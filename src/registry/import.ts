// Confluent's IMPORT mode, used to move a registry here keeping its ids and versions: a registration that brings
// its own id (and optionally its version) stores exactly those, without compatibility checks. Entering IMPORT
// needs a scope (the subject, or for the global mode the whole registry) with no live version, unless forced;
// soft-deleted versions left in it are removed permanently first, as Confluent does. One rule is stricter than
// Confluent: an id never changes meaning and a schema keeps one id, so an id already holding another schema, a
// schema already stored under another id, and a version number already taken are refused (42205), not overwritten.
import type { Database } from '../db/database.js'
import { storeFor, type Store } from '../store/handle.js'
import { GLOBAL_SUBJECT } from '../store/registryConfig.js'
import { transaction } from '../store/transactions.js'
import { schemaHash } from './canonical.js'
import { operationNotPermitted, referenceExists } from './errors.js'
import type { PreparedSchema } from './resolver.js'

/** PUT /mode[/{s}] {"mode": "IMPORT"}[?force=true] */
export async function enterImportMode(db: Database, subject: string | undefined, force: boolean): Promise<void> {
  await transaction(db, async (client) => {
    const store = storeFor(db, client)
    if (subject === undefined) await store.registryVersions.lockRegistry()
    else await store.registryVersions.lockSubject(subject)
    const current = subject === undefined ? await store.registryMode.getMode(GLOBAL_SUBJECT) : await store.registryMode.effectiveMode(subject)
    if (current !== 'IMPORT' && !force) await emptyScope(store, subject)
    await store.registryMode.setMode(subject ?? GLOBAL_SUBJECT, 'IMPORT')
  })
}

/** Refuses a scope with live versions; permanently deletes its soft-deleted ones (42206 while referenced). */
async function emptyScope(store: Store, subject: string | undefined): Promise<void> {
  const rows =
    subject === undefined
      ? await store.registryVersions.listVersions({ deleted: true, prefix: '', latestOnly: false })
      : await store.registryVersions.subjectVersions(subject, true)
  if (rows.some((v) => !v.deleted)) throw operationNotPermitted('Cannot import since found existing subjects')
  for (const v of rows) {
    const users = await store.registryVersions.schemasReferencing(v.subject, [v.version], true)
    if (users.length > 0) throw referenceExists(v.subject, v.version, users)
  }
  for (const v of rows) await store.registryVersions.deleteVersion(v.subject, v.version, true)
}

/**
 * Registration in IMPORT mode (the caller holds the subject lock and checked the mode). Without a version the
 * subject's next number is used, and a subject already holding the id live answers with that version.
 */
export async function importVersion(
  store: Store,
  subject: string,
  prepared: PreparedSchema,
  id: number,
  version: number | undefined,
): Promise<{ id: number; version: number }> {
  await storeSchemaAs(store, prepared, id)
  const versions = await store.registryVersions.subjectVersions(subject, true)
  if (version === undefined) {
    const same = versions.find((v) => v.id === id && !v.deleted)
    return { id, version: same?.version ?? (await store.registryVersions.insertVersion(subject, id)) }
  }
  const taken = versions.find((v) => v.version === version)
  if (taken?.id === id && !taken.deleted) return { id, version }
  if (taken) {
    throw operationNotPermitted(
      `Version ${version} of subject '${subject}' already exists${taken.deleted ? ' (soft-deleted)' : ''} with id ${taken.id}`,
    )
  }
  await store.registryVersions.insertVersionAt(subject, version, id)
  return { id, version }
}

/** The schema row under `id`: already there with this schema, or new. */
async function storeSchemaAs(store: Store, prepared: PreparedSchema, id: number): Promise<void> {
  const row = { schemaType: prepared.schemaType, schema: prepared.canonical, hash: prepared.hash, references: prepared.references }
  for (let attempt = 0; attempt < 2; attempt++) {
    const existing = await store.registrySchemas.findSchemaById(id, true)
    if (existing) {
      // stored text is canonical, so its hash is the one it was stored under
      if (schemaHash(existing.schemaType, existing.schema, existing.references) === prepared.hash) return
      throw operationNotPermitted(`Overwrite new schema with id ${id} is not permitted.`)
    }
    const other = await store.registrySchemas.findSchemaIdByHash(prepared.hash)
    if (other !== undefined) {
      throw operationNotPermitted(
        `The schema is already stored with id ${other}; this registry keeps one id per schema, so it cannot also take id ${id}`,
      )
    }
    if (await store.registrySchemas.insertSchemaWithId(row, id)) return
    // a concurrent import took the id or the hash between our reads and the insert: read again
  }
  throw operationNotPermitted(`Schema id ${id} is being imported concurrently; retry`)
}
