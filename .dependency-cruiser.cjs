// The layer rule of docs/architecture.md, checked by `npm run lint:deps`:
//   producer | consumer | admin  →  client  →  maintenance  →  store  →  db  →  base
// where base is config/, codec/, the KafkaJS building blocks in kafkajs/ and lazyModule.ts, read by every layer.
// A layer imports only the layers to its right (and itself); the three facades never import one another (what
// two of them share lives in client/). The services (ops, registry, deadLetter, datahub, tracing, cli, register)
// and the entry modules sit on top and may import anything below. No import circles anywhere.
const BASE = '^src/(config|codec)/|^src/kafkajs/(?!networkEvents[.]ts$)|^src/lazyModule[.]ts$'
const DB = '^src/db/'
const STORE = '^src/store/'
const MAINTENANCE = '^src/maintenance/'
// networkEvents maps the pool's round trips to KafkaJS network events: a client-level piece kept beside the other
// KafkaJS instrumentation
const CLIENT = '^src/client/|^src/kafkajs/networkEvents[.]ts$'

const below = (...layers) => ({ path: '^src/', pathNot: layers.join('|') })

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'an import circle', from: { path: '^src/' }, to: { circular: true } },
    {
      name: 'base-is-a-leaf',
      severity: 'error',
      comment: 'config, codecs and KafkaJS building blocks import nothing above them',
      from: { path: BASE },
      to: below(BASE),
    },
    { name: 'db-imports-base-only', severity: 'error', from: { path: DB }, to: below(BASE, DB) },
    { name: 'store-imports-db-and-base', severity: 'error', from: { path: STORE }, to: below(BASE, DB, STORE) },
    { name: 'maintenance-imports-store-and-below', severity: 'error', from: { path: MAINTENANCE }, to: below(BASE, DB, STORE, MAINTENANCE) },
    { name: 'client-imports-maintenance-and-below', severity: 'error', from: { path: CLIENT }, to: below(BASE, DB, STORE, MAINTENANCE, CLIENT) },
    {
      name: 'producer-apart',
      severity: 'error',
      comment: 'shared pieces go to client/',
      from: { path: '^src/producer/' },
      to: { path: '^src/(consumer|admin)/' },
    },
    {
      name: 'consumer-apart',
      severity: 'error',
      comment: 'shared pieces go to client/',
      from: { path: '^src/consumer/' },
      to: { path: '^src/(producer|admin)/' },
    },
    {
      name: 'admin-apart',
      severity: 'error',
      comment: 'shared pieces go to client/',
      from: { path: '^src/admin/' },
      to: { path: '^src/(producer|consumer)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // type-only imports count: a layer that names an upper layer's types still depends on it
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
}
