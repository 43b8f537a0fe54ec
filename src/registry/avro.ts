// Parsing stored and submitted Avro schemas with avsc. Referenced schemas are parsed first into one avsc
// registry, so the named types they define resolve inside the schema that references them.
import type * as Avsc from 'avsc'
import type { Type } from 'avsc'
import { lazyModule } from '../lazyModule.js'
import { invalidSchema } from './errors.js'

const avsc = lazyModule<typeof Avsc>('avsc')

/** JSON text -> value, as a 42201 when it is not JSON. */
export function parseSchemaJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    throw invalidSchema(`Invalid schema: not valid JSON: ${(err as Error).message}`)
  }
}

/**
 * An avsc Type for `text`, after parsing `dependencies` (schema texts, each one's own dependencies before it) into
 * the same registry. Any failure is an invalid schema (42201).
 */
export function parseAvro(text: string, dependencies: readonly string[] = []): Type {
  const registry: Record<string, Type> = {}
  try {
    for (const dep of dependencies) avsc().Type.forSchema(JSON.parse(dep) as Avsc.Schema, { registry })
  } catch (err) {
    throw invalidSchema(`Invalid schema: a referenced schema does not parse: ${(err as Error).message}`)
  }
  const doc = parseSchemaJson(text)
  try {
    return avsc().Type.forSchema(doc as Avsc.Schema, { registry })
  } catch (err) {
    throw invalidSchema(`Invalid schema ${truncate(text)}: ${(err as Error).message}`)
  }
}

function truncate(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`
}
