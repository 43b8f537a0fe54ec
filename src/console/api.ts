// The console's JSON API under /console/api: reads are GET with query parameters (names never go in the path, so any
// topic or group name works), changes are POST with a JSON body, so the request gate's CSRF rules (Origin, JSON media
// type) and `authorize` apply to them exactly as to the ops API.
import type { Admin, Producer } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { OpsError, badRequest } from '../ops/errors.js'
import { optionalGroup, optionalInteger, optionalString, optionalTopic, type Reply } from '../ops/http/io.js'
import type { AvroCodec } from '../registry/avroCodec.js'
import { SchemaRegistryError } from '../registry/errors.js'
import type { PgSchemaRegistry } from '../registry/registry.js'
import { applyReset, maintenanceNow, planReset, produceTestMessage, RESET_TARGETS, type ResetTarget } from './actions.js'
import { groupDetail, groupSummaries } from './groups.js'
import { browse } from './messages.js'
import { subjectDetail, subjectSummaries } from './schemas.js'
import { topicDetail, topicSummaries } from './topics.js'

export const API_PREFIX = '/console/api'

export interface ConsoleDeps {
  ctx: PgQueueContext
  admin: Admin
  producer(): Promise<Producer>
  registry: PgSchemaRegistry
  codec: AvroCodec
}

export interface ApiRequest {
  method: string
  query: URLSearchParams
  body: (keys: readonly string[]) => Promise<Record<string, unknown>>
  /** may this request change things (the gate's `authorize`, asked on a GET so the page can hide the actions) */
  canAct: () => Promise<boolean>
}

/** GET /session: where the console looks and whether this session may act */
export interface ConsoleSession {
  transport: 'pgqueue'
  schema: string
  tablePrefix: string
  canAct: boolean
}

type Handler = (d: ConsoleDeps, req: ApiRequest) => Promise<unknown>

const required = <T>(value: T | undefined, name: string): T => (value === undefined ? badRequest(`${name} is required`) : value)
const topicParam = (req: ApiRequest) => required(optionalTopic(req.query.get('topic'), 'topic'), 'topic')
const offsetText = (value: unknown, name: string) => {
  const text = optionalString(typeof value === 'number' ? String(value) : value, name)
  if (text !== undefined && !/^\d{1,18}$/.test(text)) badRequest(`${name} must be a non-negative integer`)
  return text
}
const timestampOf = (value: unknown, name: string) => {
  const text = optionalString(typeof value === 'number' ? String(value) : value, name)
  if (text === undefined) return undefined
  const ms = /^\d{1,15}$/.test(text) ? Number(text) : Date.parse(text)
  return Number.isFinite(ms) ? ms : badRequest(`${name} must be milliseconds since the epoch or an ISO date`)
}

const GET: Record<string, Handler> = {
  '/session': async (d, req): Promise<ConsoleSession> => ({
    transport: 'pgqueue',
    schema: d.ctx.tables.schema,
    tablePrefix: d.ctx.tables.prefix,
    canAct: await req.canAct(),
  }),
  '/topics': async (d) => ({ topics: await topicSummaries(d.ctx) }),
  '/topic': async (d, req) => topicDetail(d.ctx, topicParam(req)),
  '/groups': async (d) => ({ groups: await groupSummaries(d.ctx, d.admin) }),
  '/group': async (d, req) => groupDetail(d.ctx, d.admin, required(optionalGroup(req.query.get('group'), 'group'), 'group')),
  '/messages': async (d, req) =>
    browse(d.ctx, d.codec, {
      topic: topicParam(req),
      partition: optionalInteger(req.query.get('partition'), 'partition') ?? 0,
      offset: offsetText(req.query.get('offset'), 'offset'),
      timestamp: timestampOf(req.query.get('timestamp'), 'timestamp'),
      key: optionalString(req.query.get('key'), 'key'),
      limit: optionalInteger(req.query.get('limit'), 'limit', { min: 1, max: 500 }),
    }),
  '/subjects': async (d) => ({ subjects: await subjectSummaries(d.registry) }),
  '/subject': async (d, req) => subjectDetail(d.registry, required(optionalString(req.query.get('subject'), 'subject'), 'subject')),
}

const POST: Record<string, Handler> = {
  '/reset-offsets': async (d, req) => {
    const b = await req.body(['group', 'topic', 'to', 'timestamp', 'offset', 'partition', 'dryRun'])
    const to = b.to as ResetTarget
    if (!RESET_TARGETS.includes(to)) badRequest(`to must be one of ${RESET_TARGETS.join(', ')}`)
    const plan = {
      group: required(optionalGroup(b.group, 'group'), 'group'),
      topic: required(optionalTopic(b.topic, 'topic'), 'topic'),
      to,
      timestamp: timestampOf(b.timestamp, 'timestamp'),
      offset: offsetText(b.offset, 'offset'),
      partition: optionalInteger(b.partition, 'partition'),
    }
    const dryRun = b.dryRun !== false
    return { dryRun, partitions: dryRun ? await planReset(d.admin, plan) : await applyReset(d.admin, plan) }
  },
  '/produce': async (d, req) => {
    const b = await req.body(['topic', 'partition', 'key', 'value', 'headers'])
    const headers = b.headers ?? undefined
    if (
      headers !== undefined &&
      (typeof headers !== 'object' || Array.isArray(headers) || Object.values(headers as object).some((v) => typeof v !== 'string'))
    ) {
      badRequest('headers must be an object of strings')
    }
    return produceTestMessage(await d.producer(), {
      topic: required(optionalTopic(b.topic, 'topic'), 'topic'),
      partition: optionalInteger(b.partition, 'partition'),
      key: optionalString(b.key, 'key'),
      value: typeof b.value === 'string' ? b.value : badRequest('value must be a string'),
      headers: headers as Record<string, string> | undefined,
    })
  },
  '/maintenance': async (d, req) => {
    await req.body([])
    return maintenanceNow(d.ctx)
  },
}

/** undefined when `path` (below /console/api) is no console route. */
export async function consoleApi(d: ConsoleDeps, path: string, req: ApiRequest): Promise<Reply | undefined> {
  const table = req.method === 'POST' ? POST : GET
  const handler = table[path]
  if (!handler) return GET[path] || POST[path] ? { status: 405, json: { status: 405, error: 'Method Not Allowed' } } : undefined
  if (req.method !== 'GET' && req.method !== 'POST') return { status: 405, json: { status: 405, error: 'Method Not Allowed' } }
  try {
    return { status: 200, json: await handler(d, req) }
  } catch (err) {
    throw translated(err)
  }
}

/** Registry and admin refusals carry their meaning into the HTTP status (the rest is the ops API's statusOf). */
function translated(err: unknown): unknown {
  if (err instanceof SchemaRegistryError) return new OpsError(err.status, err.message)
  // e.g. setOffsets while the group has running members: the request is fine, the group's state is not
  if (err instanceof KafkaJSNonRetriableError && !(err as { type?: string }).type) return new OpsError(409, err.message)
  return err
}
