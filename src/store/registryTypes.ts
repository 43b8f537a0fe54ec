// Shapes of the Confluent Schema Registry API, shared by the store, the service and the HTTP layer.

/** A named type taken from another subject's version (Confluent "schema references"). */
export interface SchemaReference {
  name: string
  subject: string
  version: number
}

/** What a client submits to register, look up or test a schema. */
export interface SchemaInput {
  schema: string
  /** AVRO when absent; JSON and PROTOBUF are refused */
  schemaType?: string
  references?: SchemaReference[]
  /** IMPORT mode: the id to keep (Confluent's migration field) */
  id?: number
  /** the version to keep (IMPORT), or in READWRITE the next one */
  version?: number
}

/** A stored schema by global id. */
export interface StoredSchema {
  id: number
  schemaType: string
  schema: string
  references: SchemaReference[]
}

/** A version number or "latest" (the newest version that is not soft-deleted, or the newest of all with `deleted`). */
export type VersionSelector = number | 'latest'

/** One version of a subject, as GET /subjects/{s}/versions/{v} returns it. */
export interface SubjectVersion extends StoredSchema {
  subject: string
  version: number
  deleted: boolean
}

export const COMPATIBILITY_LEVELS = ['NONE', 'BACKWARD', 'BACKWARD_TRANSITIVE', 'FORWARD', 'FORWARD_TRANSITIVE', 'FULL', 'FULL_TRANSITIVE'] as const

export type CompatibilityLevel = (typeof COMPATIBILITY_LEVELS)[number]

export const DEFAULT_COMPATIBILITY: CompatibilityLevel = 'BACKWARD'
