// Public surface of the schema registry: the store-backed service, its HTTP handler and the Avro helpers.
export { PgSchemaRegistry } from './registry.js'
export type { RegistryBackend } from './backend.js'
export {
  createSchemaRegistryServer,
  startSchemaRegistry,
  type SchemaRegistryHandler,
  type SchemaRegistryServerOptions,
  type StartedSchemaRegistry,
} from './http/server.js'
export { REGISTRY_CONTENT_TYPE } from './http/io.js'
export { SchemaRegistryError } from './errors.js'
export { createAvroCodec, type AvroCodec } from './avroCodec.js'
export { decodeWireFormat, encodeWireFormat } from './wireFormat.js'
export {
  COMPATIBILITY_LEVELS,
  type CompatibilityLevel,
  type SchemaInput,
  type SchemaReference,
  type StoredSchema,
  type SubjectVersion,
} from '../store/registryTypes.js'
