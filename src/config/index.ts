// Public surface of the configuration layer.
export type * from './types.js'
export { resolveConfig, resolveTransport, TRANSPORT_VARIABLE } from './resolve.js'
export { resolveConnection, toPostgresUrl } from './connection.js'
export {
  parsePriorityBands,
  splitBatchAcrossBands,
  redistributeUnused,
  bandIndexOf,
  MIN_PRIORITY,
  MAX_PRIORITY,
} from './priorityBands.js'
export { DEFAULTS, DEFAULT_PRIORITY_BANDS_JSON, PARTITION_INTERVALS, KAFKA_MESSAGE_MAX_BYTES, defaultEmbeddedDataDir } from './defaults.js'
