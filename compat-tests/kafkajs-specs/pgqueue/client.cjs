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

function makeKafka({ clientId, logger, retry, logCreator, logLevel } = {}) {
  return new pkg.Kafka({
    clientId: clientId ?? `spec-${crypto.randomBytes(4).toString('hex')}`,
    brokers: ['pgqueue'],
    retry,
    logLevel: logLevel ?? (logger ? pkg.logLevel.DEBUG : pkg.logLevel.NOTHING),
    logCreator: logCreator ?? forwardTo(logger),
    pgqueue: { enabled: true, connectionString: process.env.KJS_DATABASE_URL, schema },
  })
}

/** The options a spec gave createCluster() (see cluster.cjs), or none. */
const clusterOptions = (cluster) => (cluster && cluster.__pgqueueOptions) || {}

module.exports = { makeKafka, clusterOptions, schema }
