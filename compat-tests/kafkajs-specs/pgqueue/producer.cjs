// KafkaJS's createProducer(options) as `new Kafka(...).producer(...)` of kafkajs-pgqueue.
const { kafkaFor, clusterOptions } = require('./client.cjs')

module.exports = ({ cluster, logger, retry, instrumentationEmitter: _e, ...options } = {}) => {
  const c = clusterOptions(cluster)
  return kafkaFor(cluster, logger).producer({
    allowAutoTopicCreation: c.allowAutoTopicCreation,
    maxInFlightRequests: c.maxInFlightRequests,
    metadataMaxAge: c.metadataMaxAge,
    ...options,
    retry,
  })
}
