// Canonical text of an Avro schema, used for the global id (same canonical schema => same id) and returned by
// the API. Not avsc's export (`type.schema()`): that drops logicalType and custom properties such as
// "connect.name", which readers need. Not Avro's Parsing Canonical Form either: it drops defaults and docs, so two
// schemas that resolve differently would share an id. Instead the submitted JSON is kept whole, with whitespace
// removed, object keys in a fixed order and `{"type":"int"}` written as `"int"`.
import { createHash } from 'node:crypto'
import type { SchemaReference } from './types.js'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string'])
const TYPE_KEYS = [
  'type', 'name', 'namespace', 'doc', 'aliases', 'fields', 'symbols', 'items', 'values', 'size', 'default', 'order',
  'logicalType', 'precision', 'scale',
]
const FIELD_KEYS = ['name', 'type', 'doc', 'default', 'order', 'aliases']

function isObject(v: Json): v is { [key: string]: Json } {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/** Known keys first in `order`, the rest alphabetically: key order carries no meaning in JSON. */
function ordered(obj: { [key: string]: Json }, order: string[], map: (key: string, v: Json) => Json): { [key: string]: Json } {
  const keys = Object.keys(obj)
  const known = order.filter((k) => Object.hasOwn(obj, k))
  const rest = keys.filter((k) => !order.includes(k)).sort()
  const out: { [key: string]: Json } = {}
  for (const k of [...known, ...rest]) out[k] = map(k, obj[k] as Json)
  return out
}

/** Data (defaults, custom properties): only object keys are sorted; arrays keep their order. */
function canonicalData(v: Json): Json {
  if (Array.isArray(v)) return v.map(canonicalData)
  if (isObject(v)) return ordered(v, [], (_k, x) => canonicalData(x))
  return v
}

function canonicalField(field: Json): Json {
  if (!isObject(field)) return canonicalData(field)
  return ordered(field, FIELD_KEYS, (k, v) => (k === 'type' ? canonicalSchema(v) : canonicalData(v)))
}

function canonicalSchema(node: Json): Json {
  if (Array.isArray(node)) return node.map(canonicalSchema) // a union
  if (!isObject(node)) return node
  const keys = Object.keys(node)
  if (keys.length === 1 && typeof node.type === 'string' && PRIMITIVES.has(node.type)) return node.type
  return ordered(node, TYPE_KEYS, (k, v) => {
    if (k === 'type' || k === 'items' || k === 'values') return canonicalSchema(v)
    if (k === 'fields' && Array.isArray(v)) return v.map(canonicalField)
    return canonicalData(v)
  })
}

/** Canonical JSON text of a parsed schema document. */
export function canonicalAvroText(schema: unknown): string {
  return JSON.stringify(canonicalSchema(schema as Json))
}

/** The identity of a schema for id assignment: type, canonical text and references (order included). */
export function schemaHash(schemaType: string, canonicalText: string, references: readonly SchemaReference[]): string {
  const refs = references.map((r) => [r.name, r.subject, r.version])
  return createHash('sha256').update(JSON.stringify([schemaType, canonicalText, refs])).digest('hex')
}
