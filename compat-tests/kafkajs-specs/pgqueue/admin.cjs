// KafkaJS's createAdmin(options) as `new Kafka(...).admin(...)` of kafkajs-pgqueue.
const { makeKafka, clusterOptions } = require('./client.cjs')

module.exports = ({ cluster, logger, retry, instrumentationEmitter: _e } = {}) =>
  makeKafka({ clientId: clusterOptions(cluster).clientId, logger }).admin({ retry })
