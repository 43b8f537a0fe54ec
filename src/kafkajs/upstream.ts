// The real KafkaJS this package builds on (error classes, enums, assigners, the `kafka` transport): the one place
// that loads it. Normally that is `kafkajs`, shared with the app so that `instanceof KafkaJSError` holds across
// both. Under a static package-manager alias (`"kafkajs": "npm:kafkajs-pgqueue@…"`, docs/frameworks.md) the name
// `kafkajs` is this package itself; the real one is then installed beside it as `kafkajs-upstream`.
import type KafkaJS from 'kafkajs'

export const UPSTREAM_ALIAS = 'kafkajs-upstream'

// require, not import: which package provides kafkajs is decided at run time (an alias falls back to the upstream name)
/* eslint-disable @typescript-eslint/no-require-imports */
function load(): typeof KafkaJS {
  const { name } = require('kafkajs/package.json') as { name: string }
  if (name === 'kafkajs') return require('kafkajs') as typeof KafkaJS
  try {
    return require(UPSTREAM_ALIAS) as typeof KafkaJS
  } catch (e) {
    throw new Error(
      `'kafkajs' resolves to ${name} (a package alias), and the real kafkajs is not installed as '${UPSTREAM_ALIAS}': ` +
        `add "${UPSTREAM_ALIAS}": "npm:kafkajs@^2.2.4" to your dependencies (docs/frameworks.md)`,
      { cause: e },
    )
  }
}
/* eslint-enable @typescript-eslint/no-require-imports */

const kafkajs: typeof KafkaJS = load()
export default kafkajs
