// KafkaJS's createConsumer(options) as `new Kafka(...).consumer(...)` of kafkajs-pgqueue (the inverse of what
// KafkaJS's Client.consumer() does: cluster-level options come from the spec's createCluster()).
const { kafkaFor, clusterOptions } = require('./client.cjs')

module.exports = ({ cluster, logger, retry, isolationLevel, instrumentationEmitter: _e, ...options } = {}) => {
  const c = clusterOptions(cluster)
  const level = isolationLevel ?? c.isolationLevel
  return kafkaFor(cluster, logger).consumer({
    allowAutoTopicCreation: c.allowAutoTopicCreation,
    maxInFlightRequests: c.maxInFlightRequests,
    metadataMaxAge: c.metadataMaxAge,
    ...options,
    retry,
    readUncommitted: level === 0,
  })
}
