// The operations surface: health, lag, offset reset, registrations, metrics and the HTTP API.
export { contextOf, OpsSession } from './context.js'
export { ConsumerRegistry, consumerRegistryFor, type ConsumerState, type ConsumersHealth, type TrackedConsumer } from './consumerRegistry.js'
export { OpsError } from './errors.js'
export { health, databaseHealth, type DatabaseHealth, type HealthOptions, type HealthReport } from './health.js'
export { OBSERVE_BATCHES, type BatchObservation, type BatchObserver } from './hooks.js'
export { attachConsumerMetrics, attachDeadLetterMetrics, attachProducerMetrics, type ConsumerMetricsOptions } from './instrument.js'
export {
  consumerLag,
  resetOffsets,
  STUCK_AHEAD,
  type GroupLag,
  type LagQuery,
  type OffsetReset,
  type PartitionLag,
  type ResetRequest,
  type ResetResult,
  type TopicLag,
} from './lag.js'
export { createMetrics, type MetricsOptions, type PgQueueMetrics } from './metrics.js'
export { listRegistrations, registerConsumer, unregisterConsumer, type Registration, type RegistrationKey } from './registrations.js'
export { createOpsHandler, MESSAGING_BASE, REGISTRY_MOUNT, type MountedHandler, type OpsHandler, type OpsHandlerOptions } from './http/handler.js'
export { startOpsServer, DEFAULT_OPS_PORT, type OpsServer, type OpsServerOptions } from './server.js'
export { trackConsumer } from './track.js'
