// Request bodies and responses in the registry's media type, and the mapping of failures to Confluent errors.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { SchemaRegistryError, backendError } from '../errors.js'
import type { Reply } from './router.js'

export const REGISTRY_CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json'
/** Request body media types the registry takes (Confluent's server takes these too). */
export const REGISTRY_BODY_TYPES: ReadonlySet<string> = new Set([
  REGISTRY_CONTENT_TYPE,
  'application/vnd.schemaregistry+json',
  'application/json',
  'application/octet-stream',
])
const MAX_BODY_BYTES = 16 * 1024 * 1024

/** The JSON body, or undefined when empty. 415 for other media types, 413 when too large, 400 for bad JSON. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
  if (type !== '' && !REGISTRY_BODY_TYPES.has(type)) {
    throw new SchemaRegistryError(415, 415, `HTTP 415 Unsupported Media Type: ${type}`)
  }
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) throw new SchemaRegistryError(413, 413, `Request body larger than ${MAX_BODY_BYTES} bytes`)
    chunks.push(chunk as Buffer)
  }
  const text = Buffer.concat(chunks).toString('utf8')
  if (text.trim() === '') return undefined
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new SchemaRegistryError(400, 400, `Malformed JSON body: ${(err as Error).message}`)
  }
}

export function send(res: ServerResponse, reply: Reply): void {
  const text = 'raw' in reply ? reply.raw : JSON.stringify(reply.json)
  res.writeHead(reply.status ?? 200, {
    'Content-Type': REGISTRY_CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(text),
  })
  res.end(text)
}

/** Confluent's error body for any failure; database failures become 50001 (a missing table says how to fix it). */
export function errorReply(err: unknown, schema: string): { reply: Reply; internal: boolean } {
  if (err instanceof SchemaRegistryError) return { reply: { status: err.status, json: err.toJSON() }, internal: err.status >= 500 }
  const pgCode = (err as { code?: unknown }).code
  const message =
    pgCode === '42P01'
      ? `schema registry tables are missing in schema "${schema}": run the migrations (V003__schema_registry.sql)`
      : ((err as Error)?.message ?? String(err))
  const e = backendError(message)
  return { reply: { status: e.status, json: e.toJSON() }, internal: true }
}
