// Canonical text of an Avro schema, used for the global id (same canonical schema => same id) and returned by
// the API. Not avsc's export (`type.schema()`): that drops logicalType and custom properties such as
// "connect.name", which readers need. Not Avro's Parsing Canonical Form either: it drops defaults and docs, so two
// schemas that resolve differently would share an id. Instead the submitted JSON is kept whole, with whitespace
// removed, object keys in a fixed order and `{"type":"int"}` written as `"int"`. Names of named types are written
// the way most schemas spell them, whatever form was submitted (Avro full-name rules): a short `name`, and a
// `namespace` only where it differs from the enclosing one, so `"name": "ns.R"` and `"name": "R", "namespace":
// "ns"` are one schema with one id, as in Confluent.
import { createHash } from 'node:crypto'
import type { SchemaReference } from '../store/registryTypes.js'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string'])
const TYPE_KEYS = [
  'type',
  'name',
  'namespace',
  'doc',
  'aliases',
  'fields',
  'symbols',
  'items',
  'values',
  'size',
  'default',
  'order',
  'logicalType',
  'precision',
  'scale',
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

function canonicalField(field: Json, space: string): Json {
  if (!isObject(field)) return canonicalData(field)
  return ordered(field, FIELD_KEYS, (k, v) => (k === 'type' ? canonicalSchema(v, space) : canonicalData(v)))
}

const NAMED = new Set(['record', 'error', 'enum', 'fixed'])

/** A named type's short name and namespace by Avro's rules: a dotted name wins over `namespace`, else it inherits. */
function splitName(node: { [key: string]: Json }, enclosing: string): { name: string; space: string } | undefined {
  if (typeof node.type !== 'string' || !NAMED.has(node.type) || typeof node.name !== 'string') return undefined
  const dot = node.name.lastIndexOf('.')
  if (dot >= 0) return { name: node.name.slice(dot + 1), space: node.name.slice(0, dot) }
  return { name: node.name, space: typeof node.namespace === 'string' ? node.namespace : enclosing }
}

function canonicalSchema(node: Json, enclosing: string): Json {
  if (Array.isArray(node)) return node.map((x) => canonicalSchema(x, enclosing)) // a union
  if (!isObject(node)) return node
  const keys = Object.keys(node)
  if (keys.length === 1 && typeof node.type === 'string' && PRIMITIVES.has(node.type)) return node.type
  const named = splitName(node, enclosing)
  let source = node
  if (named) {
    const { namespace: _given, ...rest } = node
    source = { ...rest, name: named.name, ...(named.space !== enclosing ? { namespace: named.space } : {}) }
  }
  const space = named?.space ?? enclosing
  return ordered(source, TYPE_KEYS, (k, v) => {
    if (k === 'type' || k === 'items' || k === 'values') return canonicalSchema(v, space)
    if (k === 'fields' && Array.isArray(v)) return v.map((f) => canonicalField(f, space))
    return canonicalData(v)
  })
}

/** Canonical JSON text of a parsed schema document. */
export function canonicalAvroText(schema: unknown): string {
  return JSON.stringify(canonicalSchema(schema as Json, ''))
}

/** The identity of a schema for id assignment: type, canonical text and references (order included). */
export function schemaHash(schemaType: string, canonicalText: string, references: readonly SchemaReference[]): string {
  const refs = references.map((r) => [r.name, r.subject, r.version])
  return createHash('sha256')
    .update(JSON.stringify([schemaType, canonicalText, refs]))
    .digest('hex')
}
