// Jest resolver for KafkaJS 2.2.4's own specs (compat-tests/kafkajs-specs/run.mjs). The specs are not changed; what
// they require is routed:
// - `kafkajs` (asked for by this package's dist/) is the spec tree itself, so error classes are the same objects the
//   specs `instanceof` against;
// - on the pgqueue backend, the factories a spec or testHelpers requires (src/consumer, src/producer, src/admin, the
//   Kafka client, src/cluster) are this package's public API through the adapters in ./pgqueue. KafkaJS's own modules
//   requiring each other (src/index.js -> ./producer ...) are left alone.
const path = require('node:path')

const tree = process.env.KJS_TREE
const backend = process.env.KJS_BACKEND
const adapters = path.join(__dirname, 'pgqueue')
const routed = {
  'src/consumer/index.js': 'consumer.cjs',
  'src/producer/index.js': 'producer.cjs',
  'src/admin/index.js': 'admin.cjs',
  'index.js': 'kafka.cjs',
  'src/cluster/index.js': 'cluster.cjs',
}

module.exports = (request, options) => {
  if (request === 'kafkajs') return path.join(tree, 'index.js')
  if (request.startsWith('kafkajs/')) return path.join(tree, request.slice('kafkajs/'.length))
  const resolved = options.defaultResolver(request, options)
  if (backend !== 'pgqueue') return resolved
  const rel = path.relative(tree, resolved).split(path.sep).join('/')
  const target = routed[rel]
  if (!target) return resolved
  const from = path.relative(tree, options.basedir).split(path.sep).join('/')
  // KafkaJS's internals keep their own modules (src/index.js builds its clients from ./producer etc., and
  // src/admin/index.js requires ../consumer); the spec files beside them (src/producer/index.spec.js,
  // compression.spec.js, src/admin/index.spec.js) require only what is listed for their folder.
  const fromSpec =
    from === 'testHelpers' ||
    from.endsWith('__tests__') ||
    (from === 'src/producer' && (target === 'producer.cjs' || target === 'consumer.cjs')) ||
    (from === 'src/admin' && target === 'admin.cjs')
  return fromSpec ? path.join(adapters, target) : resolved
}
