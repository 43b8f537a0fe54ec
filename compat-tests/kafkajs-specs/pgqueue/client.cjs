// One kafkajs-pgqueue `Kafka` per factory call, on one schema per spec file (Jest loads this module once per file).
const path = require('node:path')
const crypto = require('node:crypto')

const pkg = require(path.join(process.env.KJS_PACKAGE, 'dist', 'index.js'))
const schema = `${process.env.KJS_SCHEMA_PREFIX}_${crypto.randomBytes(5).toString('hex')}`

/** A logCreator that hands every entry to the spec's own logger (newLogger() of testHelpers), which filters. */
const forwardTo =
  (logger) =>
  () =>
  ({ namespace, label, log }) => {
    if (!logger) return
    const { message, timestamp, logger: _name, ...extra } = log
    const target = namespace && typeof logger.namespace === 'function' ? logger.namespace(namespace) : logger
    const method = String(label).toLowerCase()
    if (typeof target[method] === 'function') target[method](message, extra)
  }

/** Client-level options of KafkaJS's `new Kafka(...)` that a spec passes to createCluster(). */
const CLIENT_OPTIONS = ['clientId', 'connectionTimeout', 'requestTimeout', 'enforceRequestTimeout', 'authenticationTimeout']

function makeKafka({ logger, retry, logCreator, logLevel, cluster = {} } = {}) {
  const client = Object.fromEntries(CLIENT_OPTIONS.filter((k) => cluster[k] !== undefined).map((k) => [k, cluster[k]]))
  return new pkg.Kafka({
    ...client,
    clientId: client.clientId ?? `spec-${crypto.randomBytes(4).toString('hex')}`,
    brokers: ['pgqueue'],
    retry,
    logLevel: logLevel ?? (logger ? pkg.logLevel.DEBUG : pkg.logLevel.NOTHING),
    logCreator: logCreator ?? forwardTo(logger),
    pgqueue: { enabled: true, connectionString: process.env.KJS_DATABASE_URL, schema },
  })
}

/** The options a spec gave createCluster() (see cluster.cjs), or none. */
const clusterOptions = (cluster) => (cluster && cluster.__pgqueueOptions) || {}

// Clients built on one createCluster() share one `Kafka`, as KafkaJS's clients of one `new Kafka()` share its
// committed-offsets map (a transaction's sendOffsets is what that client's consumer reports as committed).
const byCluster = new WeakMap()

/** The `Kafka` of the spec's cluster (one per cluster object; a new one without a cluster). */
function kafkaFor(cluster, logger) {
  if (!cluster) return makeKafka({ logger })
  let kafka = byCluster.get(cluster)
  if (!kafka) {
    kafka = makeKafka({ cluster: clusterOptions(cluster), logger })
    byCluster.set(cluster, kafka)
  }
  return kafka
}

module.exports = { makeKafka, kafkaFor, clusterOptions, schema }
