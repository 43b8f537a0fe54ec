// KafkaJS's index.js (what testHelpers' createTopic and a few specs use) with `Kafka` from kafkajs-pgqueue on the
// spec file's schema; every other export is KafkaJS's own.
const path = require('node:path')
const { makeKafka } = require('./client.cjs')

class Kafka {
  constructor(config = {}) {
    const { retry, logCreator, logLevel } = config
    return makeKafka({ cluster: config, retry, logCreator, logLevel })
  }
}
module.exports = { ...require(path.join(process.env.KJS_TREE, 'index.js')), Kafka }
