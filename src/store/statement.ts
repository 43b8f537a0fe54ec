import { createHash } from 'node:crypto'
import type { Statement } from '../db/database.js'
import type { Tables } from '../db/tables.js'

/** PostgreSQL keeps the first NAMEDATALEN - 1 bytes of a prepared statement's name: longer names would collide. */
const MAX_NAME = 63
const TEXT_TAG = 8

const snake = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase()

/**
 * Builds a store module's statements once per schema + prefix. Each is named `pgq_<module>_<key>_<tag>`, e.g.
 * `pgq_offsets_commit_1a2b3c4d`, so pg_prepared_statements, logs and traces say which statement ran. The tag is a
 * hash of the text: node-postgres prepares a name once per connection and refuses the same name with another text,
 * and one connection may serve several schemas (a caller's transaction through sendWith, the CLI, tests), whose
 * texts differ only in the table names.
 */
export function statements<K extends string>(module: string, build: (t: Tables) => Record<K, string>): (t: Tables) => Record<K, Statement> {
  const cache = new WeakMap<Tables, Record<K, Statement>>()
  return (t) => {
    let built = cache.get(t)
    if (!built) {
      const texts = build(t)
      built = {} as Record<K, Statement>
      for (const key of Object.keys(texts) as K[]) {
        const text = texts[key]
        built[key] = { name: statementName(module, key, text), text }
      }
      cache.set(t, built)
    }
    return built
  }
}

export function statementName(module: string, key: string, text: string): string {
  const tag = createHash('sha1').update(text).digest('hex').slice(0, TEXT_TAG)
  const readable = `pgq_${snake(module)}_${snake(key)}`.slice(0, MAX_NAME - TEXT_TAG - 1)
  return `${readable}_${tag}`
}
