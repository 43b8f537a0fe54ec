// The schema registry's operations, in Confluent's terms, on the PostgreSQL tables of migration V003.
// Writers of one subject serialise on a transaction-scoped advisory lock; the global id comes from the unique
// canonical hash, so concurrent registrations of one schema from any number of processes agree on one id.
import type pg from 'pg'
import { Database } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { storeFor, type Store } from '../store/handle.js'
import { GLOBAL_SUBJECT } from '../store/registryConfig.js'
import { transaction } from '../store/transactions.js'
import type { VersionRow } from '../store/registryVersions.js'
import { openBackend, type RegistryBackend } from './backend.js'
import { compatibilityProblems, type VersionedType } from './compatibility.js'
import { deleteSubjectCompatibility, globalCompatibility, setGlobalCompatibility, setSubjectCompatibility, subjectCompatibility } from './config.js'
import { deleteSubject, deleteSubjectVersion } from './deletes.js'
import { assertRegistrable, assertWritable, readMode, removeMode, writeMode } from './mode.js'
import type { RegistryMode } from '../store/registryMode.js'
import { incompatibleSchema, invalidSchema, invalidVersion, schemaNotFound, subjectNotFound, versionNotFound } from './errors.js'
import { importVersion } from './import.js'
import { SchemaResolver, type PreparedSchema } from './resolver.js'
import {
  DEFAULT_COMPATIBILITY,
  type CompatibilityLevel,
  type SchemaInput,
  type StoredSchema,
  type SubjectVersion,
  type VersionSelector,
} from '../store/registryTypes.js'

export interface ReadOptions {
  /** include soft-deleted versions */
  deleted?: boolean
}

export class PgSchemaRegistry {
  readonly db: Database
  readonly resolver: SchemaResolver
  /** the store bound to the pool; a transaction binds its client with storeFor(this.db, client) */
  private readonly store: Store

  constructor(
    readonly pool: pg.Pool,
    readonly tables: Tables,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {
    this.db = new Database(pool, tables)
    this.store = storeFor(this.db)
    this.resolver = new SchemaResolver(this.store)
  }

  static async open(backend: RegistryBackend): Promise<PgSchemaRegistry> {
    const { pool, tables, release } = await openBackend(backend)
    return new PgSchemaRegistry(pool, tables, release)
  }

  async close(): Promise<void> {
    await this.onClose()
  }

  /**
   * POST /subjects/{s}/versions: the id of the schema under the subject, registering a new version if needed.
   * An `id` in the input (IMPORT mode only) is kept, as is a `version`; in READWRITE a `version` must be the next one.
   */
  async register(subject: string, input: SchemaInput): Promise<{ id: number; version: number }> {
    checkSubject(subject)
    const given = givenIdentity(input)
    const prepared = await this.resolver.prepare(input)
    return transaction(this.db, async (client) => {
      const store = storeFor(this.db, client)
      await store.registryVersions.lockSubject(subject)
      await assertRegistrable(store, subject, given.id !== undefined)
      if (given.id !== undefined) return importVersion(store, subject, prepared, given.id, given.version)
      const live = await store.registryVersions.subjectVersions(subject, false)
      const same = live.find((v) => v.hash === prepared.hash)
      // with a version given Confluent registers again under it (when it is the next one), as below
      if (same && given.version === undefined) return { id: same.id, version: same.version }
      if (given.version !== undefined && given.version !== (await store.registryVersions.nextVersion(subject))) {
        throw invalidSchema(`Version ${given.version} is not one more than the previous version of subject "${subject}"`)
      }
      // every read below goes through the transaction's client: a second pooled connection could deadlock the pool
      const level = await this.effectiveCompatibility(subject, store)
      const problems = compatibilityProblems(level, prepared.type, await this.typed(comparedWith(level, live), store))
      if (problems.length > 0) {
        throw incompatibleSchema(
          `Schema being registered is incompatible with an earlier schema for subject "${subject}" (${level}); ` + `details: ${problems.join('; ')}`,
        )
      }
      const id = await this.schemaIdFor(store, prepared)
      return { id, version: await store.registryVersions.insertVersion(subject, id) }
    })
  }

  /** POST /subjects/{s}: the version of the subject holding this schema. */
  async lookup(subject: string, input: SchemaInput, opts: ReadOptions = {}): Promise<SubjectVersion> {
    const prepared = await this.resolver.prepare(input)
    const versions = await this.versionsOrThrow(subject, opts.deleted ?? false)
    const match = versions.find((v) => v.hash === prepared.hash)
    if (!match) throw schemaNotFound('Schema not found')
    return withoutHash(match)
  }

  async subjects(opts: ReadOptions & { prefix?: string } = {}): Promise<string[]> {
    return this.store.registryVersions.listSubjects(opts.deleted ?? false, opts.prefix ?? '')
  }

  async versions(subject: string, opts: ReadOptions = {}): Promise<number[]> {
    return (await this.versionsOrThrow(subject, opts.deleted ?? false)).map((v) => v.version)
  }

  async version(subject: string, selector: VersionSelector, opts: ReadOptions = {}): Promise<SubjectVersion> {
    const versions = await this.versionsOrThrow(subject, opts.deleted ?? false)
    const found = selector === 'latest' ? versions[versions.length - 1] : versions.find((v) => v.version === selector)
    if (!found) throw versionNotFound(subject, selector)
    return withoutHash(found)
  }

  /** Ids of live schemas whose references name this subject version. */
  async referencedBy(subject: string, version: number): Promise<number[]> {
    return this.store.registryVersions.schemasReferencing(subject, [version])
  }

  async latestSchemaId(subject: string): Promise<number> {
    return (await this.version(subject, 'latest')).id
  }

  /** GET /schemas/ids/{id} */
  async schemaById(id: number): Promise<StoredSchema> {
    const found = Number.isInteger(id) ? await this.store.registrySchemas.findSchemaById(id) : undefined
    if (!found) throw schemaNotFound(`Schema ${id} not found`)
    return found
  }

  async subjectsForId(id: number, opts: ReadOptions = {}): Promise<string[]> {
    await this.schemaById(id)
    return this.store.registrySchemas.subjectsForSchemaId(id, opts.deleted ?? false)
  }

  async versionsForId(id: number, opts: ReadOptions = {}): Promise<Array<{ subject: string; version: number }>> {
    await this.schemaById(id)
    return this.store.registrySchemas.versionsForSchemaId(id, opts.deleted ?? false)
  }

  /** GET /schemas: versions of every subject, filtered and paged. */
  async listSchemas(
    opts: { prefix?: string; deleted?: boolean; latestOnly?: boolean; offset?: number; limit?: number } = {},
  ): Promise<SubjectVersion[]> {
    const rows = await this.store.registryVersions.listVersions({
      prefix: opts.prefix ?? '',
      deleted: opts.deleted ?? false,
      latestOnly: opts.latestOnly ?? false,
    })
    const start = Math.max(0, opts.offset ?? 0)
    const end = opts.limit !== undefined && opts.limit > 0 ? start + opts.limit : undefined
    return rows.slice(start, end).map(withoutHash)
  }

  /** POST /compatibility/subjects/{s}/versions[/{v}]: without a version, as registration would check. */
  async testCompatibility(
    subject: string,
    selector: VersionSelector | undefined,
    input: SchemaInput,
  ): Promise<{ compatible: boolean; messages: string[] }> {
    const prepared = await this.resolver.prepare(input)
    const level = await this.effectiveCompatibility(subject)
    let against: VersionRow[]
    if (selector === undefined) {
      against = await this.store.registryVersions.subjectVersions(subject, false)
    } else {
      const chosen = await this.version(subject, selector)
      against = [{ ...chosen, hash: '' }]
    }
    const messages = compatibilityProblems(level, prepared.type, await this.typed(comparedWith(level, against)))
    return { compatible: messages.length === 0, messages }
  }

  /** DELETE /subjects/{s}: soft delete, or with `permanent` remove what a soft delete left. */
  async deleteSubject(subject: string, opts: { permanent?: boolean } = {}): Promise<number[]> {
    await assertWritable(this.store, subject)
    return deleteSubject(this.db, subject, opts.permanent ?? false)
  }

  async deleteVersion(subject: string, selector: VersionSelector, opts: { permanent?: boolean } = {}): Promise<number> {
    await assertWritable(this.store, subject)
    return deleteSubjectVersion(this.db, subject, selector, opts.permanent ?? false)
  }

  /** GET /mode[/{s}] */
  getMode(subject?: string, opts: { defaultToGlobal?: boolean } = {}): Promise<RegistryMode> {
    return readMode(this.store, subject, opts.defaultToGlobal ?? false)
  }

  /** PUT /mode[/{s}]: READWRITE, READONLY or IMPORT (42204 otherwise); IMPORT on a non-empty scope needs `force`. */
  setMode(mode: unknown, subject?: string, opts: { force?: boolean } = {}): Promise<RegistryMode> {
    return writeMode(this.db, mode, subject, opts.force ?? false)
  }

  /** DELETE /mode/{s} */
  deleteMode(subject: string): Promise<RegistryMode> {
    return removeMode(this.store, subject)
  }

  /** The global level, or a subject's own (40408 when unset unless `defaultToGlobal`). */
  getCompatibility(subject?: string, opts: { defaultToGlobal?: boolean } = {}): Promise<CompatibilityLevel> {
    if (subject === undefined) return globalCompatibility(this.store)
    return subjectCompatibility(this.store, subject, opts.defaultToGlobal ?? false)
  }

  /** Sets the global level, or a subject's when `subject` is given; 42203 for an unknown level. */
  setCompatibility(level: CompatibilityLevel | string, subject?: string): Promise<CompatibilityLevel> {
    if (subject === undefined) return setGlobalCompatibility(this.store, level)
    return setSubjectCompatibility(this.store, subject, level)
  }

  /** Removes a subject's own level (it falls back to the global one); returns the removed level. */
  deleteCompatibility(subject: string): Promise<CompatibilityLevel> {
    return deleteSubjectCompatibility(this.store, subject)
  }

  /** The level that applies to a subject: its own, else the global one, else BACKWARD. */
  async effectiveCompatibility(subject: string, store: Store = this.store): Promise<CompatibilityLevel> {
    const { getCompatibility } = store.registryConfig
    return (await getCompatibility(subject)) ?? (await getCompatibility(GLOBAL_SUBJECT)) ?? DEFAULT_COMPATIBILITY
  }

  /** Versions of a subject; 40401 when it has none (none that are live, unless deleted ones are asked for). */
  async versionsOrThrow(subject: string, deleted: boolean): Promise<VersionRow[]> {
    const versions = await this.store.registryVersions.subjectVersions(subject, deleted)
    if (versions.length === 0) throw subjectNotFound(subject)
    return versions
  }

  /** Parsed types of the versions, one at a time (a transaction's client runs one query at a time anyway). */
  private async typed(versions: VersionRow[], store: Store = this.store): Promise<VersionedType[]> {
    const out: VersionedType[] = []
    for (const v of versions) out.push({ version: v.version, type: await this.resolver.typeOf(v.id, store) })
    return out
  }

  /** The global id of a schema: existing row, else a new one; a concurrent winner's id when we lose the race. */
  private async schemaIdFor(store: Store, prepared: PreparedSchema): Promise<number> {
    const row = { schemaType: prepared.schemaType, schema: prepared.canonical, hash: prepared.hash, references: prepared.references }
    // a drawn id can collide with one imported after the sequence moved (another process's IMPORT): draw again
    for (let attempt = 0; attempt < 5; attempt++) {
      const existing = await store.registrySchemas.findSchemaIdByHash(prepared.hash)
      if (existing !== undefined) return existing
      const inserted = await store.registrySchemas.insertSchema(row)
      if (inserted !== undefined) return inserted
      // Else another transaction committed the hash (READ COMMITTED: the next statement sees its row) or the id.
    }
    throw new Error('could not allocate a schema id: every id drawn was taken by imported schemas')
  }
}

function checkSubject(subject: string): void {
  if (typeof subject !== 'string' || subject.length === 0 || /[\u0000-\u001f]/.test(subject)) {
    throw invalidSchema(`Invalid subject ${JSON.stringify(subject)}`)
  }
}

/** Only the versions a level compares with need parsing. */
function comparedWith(level: CompatibilityLevel, live: VersionRow[]): VersionRow[] {
  if (level === 'NONE') return []
  return level.endsWith('_TRANSITIVE') ? live : live.slice(-1)
}

const INT32_MAX = 2_147_483_647

/** The `id` and `version` a registration may carry (Confluent: absent, or <= 0 for a version, means none). */
function givenIdentity(input: SchemaInput): { id?: number; version?: number } {
  const { id, version } = (input ?? {}) as { id?: unknown; version?: unknown }
  const out: { id?: number; version?: number } = {}
  if (id !== undefined && id !== null && !(typeof id === 'number' && id < 0)) {
    if (!Number.isInteger(id) || (id as number) > INT32_MAX) throw invalidSchema(`Invalid schema id ${JSON.stringify(id)}`)
    out.id = id as number
  }
  if (version !== undefined && version !== null && !(typeof version === 'number' && version <= 0)) {
    if (!Number.isInteger(version) || (version as number) > INT32_MAX) throw invalidVersion(String(version))
    out.version = version as number
  }
  return out
}

function withoutHash(v: VersionRow): SubjectVersion {
  const { hash: _hash, ...rest } = v
  return rest
}
