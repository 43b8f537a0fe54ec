// KafkaJS's createAdmin(options) as `new Kafka(...).admin(...)` of kafkajs-pgqueue.
const { kafkaFor } = require('./client.cjs')

module.exports = ({ cluster, logger, retry, instrumentationEmitter: _e } = {}) => kafkaFor(cluster, logger).admin({ retry })
