// DataHub's messaging operations (`/openapi/operations/messaging`), same paths, parameters and response shapes,
// answered from the pgQueue tables. Numbers are JSON numbers as in DataHub (offsets stay exact below 2^53).
import type { PgQueueContext } from '../../client/context.js'
import { consumerLag, resetOffsets, type GroupLag } from '../lag.js'
import { listRegistrations, registerConsumer, unregisterConsumer } from '../registrations.js'
import { badRequest } from '../errors.js'
import { optionalBoolean, optionalGroup, optionalInteger, optionalTopic, type Reply } from './io.js'

export interface MessagingRequest {
  method: string
  /** path below the messaging base */
  path: string
  query: URLSearchParams
  /** the JSON object body; keys outside `keys` answer 400 */
  body: (keys: readonly string[]) => Promise<Record<string, unknown>>
}

type Route = (ctx: PgQueueContext, req: MessagingRequest) => Promise<Reply>

const q = (req: MessagingRequest, name: string) => req.query.get(name) ?? undefined
const num = (value: string) => Number(value)

/** DataHub's lag envelope: consumerGroups{group:{topic:{partitions?, metrics}}}. */
export function lagEnvelope(groups: GroupLag[]): Record<string, unknown> {
  const consumerGroups: Record<string, Record<string, unknown>> = {}
  for (const g of groups) {
    const topics: Record<string, unknown> = (consumerGroups[g.group] = {})
    for (const t of g.topics) {
      const entry: Record<string, unknown> = {
        metrics: { totalLag: num(t.totalLag), maxLag: num(t.maxLag), partitions: t.partitionCount, stuckAhead: t.stuckAhead },
      }
      if (t.partitions) {
        entry.partitions = Object.fromEntries(
          t.partitions.map((p) => {
            const cell: Record<string, unknown> = { offset: num(p.offset), high: num(p.high), lag: num(p.lag) }
            if (p.metadata) Object.assign(cell, { aheadBy: num(p.aheadBy), metadata: p.metadata })
            return [String(p.partition), cell]
          }),
        )
      }
      topics[t.topic] = entry
    }
  }
  return { transport: 'pgqueue', consumerGroups }
}

const routes: Record<string, Partial<Record<string, Route>>> = {
  '/transport': {
    GET: async (ctx) => ({ status: 200, json: { transport: 'pgqueue', schema: ctx.tables.schema, tablePrefix: ctx.tables.prefix } }),
  },
  '/consumer/lag': {
    GET: async (ctx, req) => {
      const groups = await consumerLag(ctx, {
        group: optionalGroup(q(req, 'group'), 'group'),
        topic: optionalTopic(q(req, 'topic'), 'topic'),
        detailed: optionalBoolean(q(req, 'detailed'), 'detailed') ?? false,
      })
      return { status: 200, json: lagEnvelope(groups) }
    },
  },
  '/consumers': {
    GET: async (ctx, req) => ({
      status: 200,
      json: await listRegistrations(ctx, { topic: optionalTopic(q(req, 'topicName'), 'topicName') }),
    }),
    PUT: async (ctx, req) => {
      const body = await req.body(['consumerGroup', 'topicName'])
      return { status: 200, json: await registerConsumer(ctx, registrationKey(body.consumerGroup, body.topicName)) }
    },
    DELETE: async (ctx, req) => ({
      status: 200,
      json: await unregisterConsumer(ctx, registrationKey(q(req, 'consumerGroup'), q(req, 'topicName'))),
    }),
  },
  '/consumer/offsets/reset': {
    POST: async (ctx, req) => {
      const body = await req.body(['consumerGroup', 'topicName', 'partitionId', 'onlyStuckAhead', 'allGroups'])
      const group = optionalGroup(body.consumerGroup, 'consumerGroup')
      // every group only when asked for by name: a misspelt consumerGroup must not reset them all
      const allGroups = optionalBoolean(body.allGroups, 'allGroups') ?? false
      if (group === undefined && !allGroups) badRequest('consumerGroup is required (or "allGroups": true to reset every group)')
      if (group !== undefined && allGroups) badRequest('give either consumerGroup or "allGroups": true, not both')
      const result = await resetOffsets(ctx, {
        group,
        topic: optionalTopic(body.topicName, 'topicName'),
        partition: optionalInteger(body.partitionId, 'partitionId'),
        onlyStuckAhead: optionalBoolean(body.onlyStuckAhead, 'onlyStuckAhead'),
      })
      return {
        status: 200,
        json: {
          transport: 'pgqueue',
          partitionsUpdated: result.partitionsUpdated,
          resets: result.resets.map((r) => ({
            consumerGroup: r.group,
            topicName: r.topic,
            partitionId: r.partition,
            previousOffset: r.previousOffset === null ? null : num(r.previousOffset),
            newOffset: num(r.newOffset),
            maxSeq: num(r.high),
          })),
        },
      }
    },
  },
}

/** Both parts are required (the registration store says so with 400 when one is missing). */
const registrationKey = (group: unknown, topic: unknown) => ({
  group: optionalGroup(group, 'consumerGroup') as string,
  topic: optionalTopic(topic, 'topicName') as string,
})

/** The route for a method and path: a Route, 'method' (path known, method not) or undefined (unknown path). */
export function messagingRoute(method: string, path: string): Route | 'method' | undefined {
  const byMethod = routes[path.replace(/\/+$/, '') || '/']
  if (!byMethod) return undefined
  return byMethod[method] ?? 'method'
}
