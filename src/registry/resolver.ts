// Turns submitted and stored schemas into avsc Types: validates the request, resolves references through the
// versions they name, and caches parsed stored schemas by id (a schema row never changes once written).
import type { Type } from 'avsc'
import type { Store } from '../store/handle.js'
import { parseAvro, parseSchemaJson } from './avro.js'
import { canonicalAvroText, schemaHash } from './canonical.js'
import { invalidSchema } from './errors.js'
import type { SchemaReference } from '../store/registryTypes.js'
import { isStorableText } from '../db/text.js'

/** A validated submission, ready to store or compare. */
export interface PreparedSchema {
  schemaType: 'AVRO'
  canonical: string
  hash: string
  references: SchemaReference[]
  type: Type
}

const MAX_CACHED = 1000
const INT32_MAX = 2_147_483_647

export class SchemaResolver {
  private readonly types = new Map<number, Promise<Type>>()

  constructor(private readonly store: Store) {}

  async prepare(input: unknown): Promise<PreparedSchema> {
    const { schema, references } = validateInput(input)
    const type = parseAvro(schema, await this.dependencies(references))
    const canonical = canonicalAvroText(parseSchemaJson(schema))
    return { schemaType: 'AVRO', canonical, hash: schemaHash('AVRO', canonical, references), references, type }
  }

  /**
   * The parsed schema of a stored id (soft-deleted or unused ids too). Inside a transaction pass the store bound to its client:
   * waiting for a second pooled connection while holding one can exhaust the pool.
   */
  typeOf(id: number, store: Store = this.store): Promise<Type> {
    let cached = this.types.get(id)
    if (!cached) {
      cached = this.load(id, store)
      cached.catch(() => this.types.delete(id))
      if (this.types.size >= MAX_CACHED) this.types.delete(this.types.keys().next().value as number)
      this.types.set(id, cached)
    }
    return cached
  }

  private async load(id: number, store: Store): Promise<Type> {
    const row = await store.registrySchemas.findSchemaById(id, true)
    if (!row) throw new Error(`schema id ${id} vanished while in use`)
    return parseAvro(row.schema, await this.dependencies(row.references, store))
  }

  /** Schema texts of every referenced version, each after its own references, once each. */
  private async dependencies(
    refs: readonly SchemaReference[],
    store: Store = this.store,
    seen = new Set<number>(),
    out: string[] = [],
  ): Promise<string[]> {
    for (const ref of refs) {
      const version = await store.registryVersions.subjectVersion(ref.subject, ref.version)
      if (!version) {
        throw invalidSchema(`Invalid schema: reference "${ref.name}" names subject "${ref.subject}" version ${ref.version}, which does not exist`)
      }
      if (seen.has(version.id)) continue
      seen.add(version.id)
      await this.dependencies(version.references, store, seen, out)
      out.push(version.schema)
    }
    return out
  }
}

function validateInput(input: unknown): { schema: string; references: SchemaReference[] } {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw invalidSchema('Invalid schema: the body must be a JSON object')
  }
  const { schema, schemaType, references } = input as Record<string, unknown>
  const type = schemaType === undefined || schemaType === null || schemaType === '' ? 'AVRO' : schemaType
  if (type === 'JSON' || type === 'PROTOBUF') {
    throw invalidSchema(`Schema type ${type} is not supported: this registry stores AVRO schemas only`)
  }
  if (type !== 'AVRO') throw invalidSchema(`Invalid schema type ${JSON.stringify(type)}: only AVRO is supported`)
  if (typeof schema !== 'string' || schema.trim() === '') throw invalidSchema('Invalid schema: "schema" must be a non-empty string')
  if (!isStorableText(schema)) throw invalidSchema('Invalid schema: it must be well-formed Unicode without NUL characters')
  if (references !== undefined && references !== null && !Array.isArray(references)) {
    throw invalidSchema('Invalid schema: "references" must be an array')
  }
  const refs = ((references as unknown[] | null | undefined) ?? []).map((r, i) => {
    const { name, subject, version } = (r ?? {}) as Record<string, unknown>
    if (
      typeof name !== 'string' ||
      name === '' ||
      typeof subject !== 'string' ||
      subject === '' ||
      !isStorableText(name) ||
      !isStorableText(subject) ||
      !Number.isInteger(version) ||
      (version as number) < 1 ||
      (version as number) > INT32_MAX
    ) {
      throw invalidSchema(`Invalid schema: reference ${i} needs a name, a subject and a version from 1 to ${INT32_MAX}`)
    }
    return { name, subject, version: version as number }
  })
  return { schema, references: refs }
}
