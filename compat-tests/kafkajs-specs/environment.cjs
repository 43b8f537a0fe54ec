// Jest 25's node environment with the globals Node has gained since (performance, AbortController, structuredClone
// ...), which this package's dist/ uses; KafkaJS's own code runs as before.
const path = require('node:path')

const NodeEnvironment = require(path.join(process.env.KJS_TREE, 'node_modules', 'jest-environment-node'))
const NAMES = [
  'performance',
  'AbortController',
  'AbortSignal',
  'structuredClone',
  'TextEncoder',
  'TextDecoder',
  'EventTarget',
  'Event',
  'queueMicrotask',
  'fetch',
  'Headers',
  'Request',
  'Response',
  'Blob',
  'BroadcastChannel',
  'MessageChannel',
  'crypto',
  'URL',
  'URLSearchParams',
]

module.exports = class ModernNodeEnvironment extends NodeEnvironment {
  constructor(config, context) {
    super(config, context)
    for (const name of NAMES) {
      if (this.global[name] === undefined && globalThis[name] !== undefined) this.global[name] = globalThis[name]
    }
  }
}
