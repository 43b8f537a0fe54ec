// Loads a dependency on first use instead of at `require('kafkajs-pgqueue')`: metrics (prom-client), Avro
// (avsc) and tracing (@opentelemetry/api) cost hundreds of milliseconds together and most apps use only some.
import { createRequire } from 'node:module'

const load = createRequire(__filename)

/** A function returning module `name`, required on its first call (node caches it afterwards). */
export function lazyModule<T>(name: string): () => T {
  let mod: T | undefined
  return () => (mod ??= load(name) as T)
}
