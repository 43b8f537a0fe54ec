import type { IncomingMessage, ServerResponse } from 'node:http'
import { badRequest } from '../errors.js'

const MAX_BODY_BYTES = 1 << 20

export interface Reply {
  status: number
  json?: unknown
  text?: string
  contentType?: string
}

export function send(res: ServerResponse, reply: Reply): void {
  const body = reply.text ?? `${JSON.stringify(reply.json ?? null)}\n`
  res.writeHead(reply.status, {
    'content-type': reply.contentType ?? (reply.text === undefined ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8'),
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  })
  res.end(body)
}

export const errorReply = (status: number, message: string): Reply => ({ status, json: { status, error: message } })

/** The request's JSON object body; an empty body is `{}`. */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) badRequest(`request body larger than ${MAX_BODY_BYTES} bytes`)
    chunks.push(chunk)
  }
  const text = Buffer.concat(chunks).toString('utf8').trim()
  if (text === '') return {}
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return badRequest('request body is not valid JSON')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) badRequest('request body must be a JSON object')
  return value as Record<string, unknown>
}

/** Query and body values: absent stays undefined, anything else must have the right type. */
export function optionalString(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string') return badRequest(`${name} must be a string`)
  return value
}

export function optionalBoolean(value: unknown, name: string): boolean | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value === 'boolean') return value
  if (value === 'true') return true
  if (value === 'false') return false
  return badRequest(`${name} must be true or false`)
}

export function optionalInteger(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined
  const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isInteger(n)) return badRequest(`${name} must be an integer`)
  return n
}
