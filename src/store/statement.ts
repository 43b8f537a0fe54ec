import { createHash } from 'node:crypto'
import type { Statement } from '../db/database.js'
import type { Tables } from '../db/tables.js'

/**
 * Builds a store module's statements once per schema + prefix. Names derive from the text, so the same SQL
 * for another schema gets another prepared statement (node-postgres prepares by name per connection).
 */
export function statements<K extends string>(build: (t: Tables) => Record<K, string>): (t: Tables) => Record<K, Statement> {
  const cache = new WeakMap<Tables, Record<K, Statement>>()
  return (t) => {
    let built = cache.get(t)
    if (!built) {
      const texts = build(t)
      built = {} as Record<K, Statement>
      for (const key of Object.keys(texts) as K[]) {
        const text = texts[key]
        built[key] = { name: `pgq_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text }
      }
      cache.set(t, built)
    }
    return built
  }
}
