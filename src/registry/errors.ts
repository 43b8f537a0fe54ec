// The Confluent Schema Registry's error model: an HTTP status plus a finer `error_code` in the JSON body
// ({"error_code": 40401, "message": "..."}). Clients branch on both, so the codes follow Confluent's table.

export class SchemaRegistryError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: number,
    message: string,
  ) {
    super(message)
    this.name = 'SchemaRegistryError'
  }

  toJSON(): { error_code: number; message: string } {
    return { error_code: this.errorCode, message: this.message }
  }
}

const q = (s: string) => `'${s}'`

export const subjectNotFound = (subject: string) => new SchemaRegistryError(404, 40401, `Subject ${q(subject)} not found.`)
export const versionNotFound = (subject: string, version: number | string) =>
  new SchemaRegistryError(404, 40402, `Version ${version} not found for subject ${q(subject)}.`)
export const schemaNotFound = (detail = 'Schema not found') => new SchemaRegistryError(404, 40403, detail)
export const subjectSoftDeleted = (subject: string) =>
  new SchemaRegistryError(404, 40404, `Subject ${q(subject)} was soft deleted. Set permanent=true to delete permanently`)
export const subjectNotSoftDeleted = (subject: string) =>
  new SchemaRegistryError(404, 40405, `Subject ${q(subject)} was not deleted first before being permanently deleted`)
export const versionSoftDeleted = (subject: string, version: number) =>
  new SchemaRegistryError(404, 40406, `Subject ${q(subject)} Version ${version} was soft deleted. Set permanent=true to delete permanently`)
export const versionNotSoftDeleted = (subject: string, version: number) =>
  new SchemaRegistryError(404, 40407, `Subject ${q(subject)} Version ${version} was not deleted first before being permanently deleted`)
export const subjectLevelCompatibilityNotConfigured = (subject: string) =>
  new SchemaRegistryError(404, 40408, `Subject ${q(subject)} does not have subject-level compatibility configured`)
export const incompatibleSchema = (message: string) => new SchemaRegistryError(409, 409, message)
export const invalidSchema = (message: string) => new SchemaRegistryError(422, 42201, message)
export const invalidVersion = (version: string) =>
  new SchemaRegistryError(
    422,
    42202,
    `The specified version ${q(version)} is not a valid version id. Allowed values are between [1, 2^31-1] and the string "latest"`,
  )
export const invalidCompatibilityLevel = (level: unknown) =>
  new SchemaRegistryError(
    422,
    42203,
    `Invalid compatibility level ${JSON.stringify(level)}. Valid values are NONE, BACKWARD, FORWARD, FULL, ` +
      'BACKWARD_TRANSITIVE, FORWARD_TRANSITIVE and FULL_TRANSITIVE',
  )
export const referenceExists = (subject: string, version: number, ids: number[]) =>
  new SchemaRegistryError(
    422,
    42206,
    `One or more references exist to the schema {subject=${subject}, version=${version}}: schema ids ${ids.join(', ')}`,
  )
export const backendError = (message: string) => new SchemaRegistryError(500, 50001, `Error in the backend data store: ${message}`)
export const invalidMode = (mode: unknown) =>
  new SchemaRegistryError(422, 42204, `Invalid mode ${JSON.stringify(mode)}: expected READWRITE, READONLY or IMPORT`)
/** 42205, Confluent's "operation not permitted" (a mode forbids it, or it would overwrite an id or a version). */
export const operationNotPermitted = (message: string) => new SchemaRegistryError(422, 42205, message)
export const readOnlyMode = (subject: string) => operationNotPermitted(`Subject ${q(subject)} is in read-only mode`)
export const modeNotFound = (subject: string) => new SchemaRegistryError(404, 40409, `Subject ${q(subject)} has no mode of its own`)
