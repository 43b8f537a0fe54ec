import type { IncomingMessage, ServerResponse } from 'node:http'
import { gzip } from 'node:zlib'
import { isStorableText } from '../../db/text.js'
import { KafkaJSError } from '../../kafkajs/errors.js'
import { validateGroupId } from '../../kafkajs/messageValidation.js'
import { OpsError, badRequest } from '../errors.js'

const MAX_BODY_BYTES = 1 << 20

export interface Reply {
  status: number
  json?: unknown
  text?: string
  contentType?: string
  headers?: Record<string, string>
  /** set on replies that may be compressed: whether the client accepts gzip (acceptsGzip) */
  gzip?: boolean
}

/** Below this a gzipped body saves too little to be worth it. */
const GZIP_MIN_BYTES = 1024

/** Whether the request's Accept-Encoding names gzip. */
export const acceptsGzip = (req: IncomingMessage): boolean => /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))

export function send(res: ServerResponse, reply: Reply): void {
  const body = Buffer.from(reply.text ?? `${JSON.stringify(reply.json ?? null)}\n`)
  const write = (bytes: Buffer, gzipped: boolean) => {
    res.writeHead(reply.status, {
      'content-type': reply.contentType ?? (reply.text === undefined ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8'),
      'content-length': bytes.length,
      'cache-control': 'no-store',
      ...(reply.gzip === undefined ? {} : { vary: 'accept-encoding' }),
      ...(gzipped ? { 'content-encoding': 'gzip' } : {}),
      ...reply.headers,
    })
    res.end(bytes)
  }
  if (!reply.gzip || body.length < GZIP_MIN_BYTES) return write(body, false)
  // off the event loop: a message browser page can be large
  gzip(body, (err, zipped) => (err ? write(body, false) : write(zipped, true)))
}

export const errorReply = (status: number, message: string): Reply => ({ status, json: { status, error: message } })

const tooLarge = (): never => {
  throw new OpsError(413, `request body larger than ${MAX_BODY_BYTES} bytes`)
}

/** The request's JSON object body; an empty body is `{}`. Keys other than `keys` are refused: a typo is not ignored. */
export async function readJsonObject(req: IncomingMessage, keys: readonly string[]): Promise<Record<string, unknown>> {
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) tooLarge()
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) tooLarge()
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
  const unknown = Object.keys(value as object).filter((k) => !keys.includes(k))
  if (unknown.length > 0)
    badRequest(`unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')}: expected ${keys.join(', ')}`)
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

const INT32_MAX = 2_147_483_647

/** An integer within [min, max] (default: a PostgreSQL int, 0 and up). */
export function optionalInteger(value: unknown, name: string, { min = 0, max = INT32_MAX } = {}): number | undefined {
  if (value === undefined || value === null || value === '') return undefined
  const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isInteger(n)) return badRequest(`${name} must be an integer`)
  if (n < min || n > max) return badRequest(`${name} must be between ${min} and ${max}, got ${n}`)
  return n
}

/** A consumer group id, by the same rules as the consumer's groupId (kafkajs/messageValidation.ts). */
export function optionalGroup(value: unknown, name: string): string | undefined {
  const group = optionalString(value, name)
  if (group === undefined) return undefined
  try {
    validateGroupId(group)
  } catch (err) {
    if (err instanceof KafkaJSError) badRequest(`${name}: ${err.message}`)
    throw err
  }
  return group
}

const MAX_TOPIC_LENGTH = 255

/** A topic name to look up: text PostgreSQL can hold (no NUL, no unpaired surrogate), at most 255 characters. */
export function optionalTopic(value: unknown, name: string): string | undefined {
  const topic = optionalString(value, name)
  if (topic === undefined) return undefined
  if (topic.length > MAX_TOPIC_LENGTH) badRequest(`${name} must be at most ${MAX_TOPIC_LENGTH} characters, got ${topic.length}`)
  if (!isStorableText(topic)) badRequest(`${name} must be well-formed Unicode without NUL characters`)
  return topic
}
