// The operations HTTP API as one node:http request handler: /health, /metrics, DataHub's messaging operations under
// /openapi/operations/messaging, an optional schema registry mounted at /schema-registry/api, and the web console
// (src/console) at / with its API under /console/api.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { PgQueueContext } from '../../client/context.js'
import { createConsoleApi, loadConsoleAssets } from '../../console/index.js'
import { consumerRegistryFor, type ConsumerRegistry } from '../consumerRegistry.js'
import { OpsSession, contextOf } from '../context.js'
import { statusOf } from '../errors.js'
import { databaseHealth, summarizeHealth, type HealthOptions, type HealthReport } from '../health.js'
import { consumerLag } from '../lag.js'
import { createMetrics, type PgQueueMetrics } from '../metrics.js'
import { REGISTRY_BODY_TYPES, REGISTRY_CONTENT_TYPE } from '../../registry/http/io.js'
import { createRequestGate, JSON_BODY_TYPES, type Rejection, type RequestGateOptions } from './gate.js'
import { hostAllowList } from './hosts.js'
import { acceptsGzip, errorReply, readJsonObject, send, type Reply } from './io.js'
import { messagingRoute } from './messaging.js'

export const MESSAGING_BASE = '/openapi/operations/messaging'
export const REGISTRY_MOUNT = '/schema-registry/api'

/** A node:http-style handler to mount, e.g. createSchemaRegistryServer's; its own base path is honoured. */
export type MountedHandler = ((req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void) & {
  readonly basePath?: string
}

/**
 * Every request, the mounted registry's included, passes one gate first (./gate.ts): Host allow-list, credentials
 * (`token` / `authenticate`), then for state-changing requests Origin, media type and `authorize`.
 */
export interface OpsHandlerOptions extends RequestGateOptions {
  /** a pgQueue context; or give `kafka` */
  ctx?: PgQueueContext
  /** what createKafka returned: pgQueue gets every endpoint, real Kafka health and metrics only (the rest 503) */
  kafka?: object
  registryHandler?: MountedHandler
  /** prefix of every route, e.g. '/ops'; default none */
  basePath?: string
  /** default: fresh metrics in their own registry */
  metrics?: PgQueueMetrics
  /** default: the registry of the context (or of `kafka`) */
  consumers?: ConsumerRegistry
  health?: Omit<HealthOptions, 'consumers'>
  /** unexpected (500) failures, e.g. to log them */
  onError?: (err: unknown) => void
  /** serve the web console at / (docs/console.md); default true */
  console?: boolean
}

export interface OpsHandler {
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void
  readonly basePath: string
  readonly metrics: PgQueueMetrics
  readonly consumers: ConsumerRegistry
  /** undefined for the Kafka transport */
  readonly context: PgQueueContext | undefined
  health(): Promise<HealthReport>
  /** releases the database reference the handler took (the mounted registry is left to its owner) */
  close(): Promise<void>
}

const normalize = (base = '') => {
  const trimmed = base.replace(/\/+$/, '')
  return trimmed === '' ? '' : trimmed.startsWith('/') ? trimmed : `/${trimmed}`
}

/** A refused request, in the error format of the API it was meant for. */
function rejection(r: Rejection, registry: boolean): Reply {
  const body = registry
    ? { status: r.status, json: { error_code: r.status, message: r.message }, contentType: REGISTRY_CONTENT_TYPE }
    : errorReply(r.status, r.message)
  return { ...body, headers: r.headers }
}

export function createOpsHandler(options: OpsHandlerOptions): OpsHandler {
  const ctx = options.ctx ?? (options.kafka ? contextOf(options.kafka) : undefined)
  const owner = ctx ?? options.kafka
  if (!owner) throw new TypeError('createOpsHandler needs `ctx` or `kafka`')
  const basePath = normalize(options.basePath)
  const session = ctx ? new OpsSession(ctx) : undefined
  const metrics = options.metrics ?? createMetrics()
  const consumers = options.consumers ?? consumerRegistryFor(owner)
  if (session) metrics.setLagSource(async () => consumerLag(await session.connect()))
  const consoleOn = options.console ?? true
  const consoleApi = session && consoleOn ? createConsoleApi(session, options.authorize) : undefined
  const consoleAssets = consoleOn ? loadConsoleAssets(basePath, { bearer: options.token !== undefined }) : undefined
  // the console's page and bundle hold no data: served to an allowed Host without credentials (a browser cannot
  // send a bearer token when it opens a URL); the page then asks for the token and sends it on every API call
  const hostAllowed = hostAllowList(options.allowedHosts, options.listenHost)

  const health = async (): Promise<HealthReport> => {
    const check = options.health?.consumerHealthCheck
    if (!session) return summarizeHealth('kafka', undefined, consumers.snapshot(), check)
    const database = await session.connect().then(
      (c) => databaseHealth(c, options.health?.timeoutMs),
      (err: Error) => ({ reachable: false, latencyMs: null, error: err.message }),
    )
    return summarizeHealth('pgqueue', database, consumers.snapshot(), check)
  }

  const route = async (req: IncomingMessage, path: string): Promise<Reply> => {
    const method = req.method ?? 'GET'
    if (path === '/health') {
      if (method !== 'GET') return errorReply(405, 'Method Not Allowed')
      const report = await health()
      return { status: report.status === 'UP' ? 200 : 503, json: report }
    }
    if (path === '/metrics') {
      if (method !== 'GET') return errorReply(405, 'Method Not Allowed')
      return { status: 200, text: await metrics.registry.metrics(), contentType: metrics.registry.contentType }
    }
    if (consoleOn && path.startsWith('/console/')) {
      if (!consoleApi) return errorReply(503, 'No pgQueue store: the console needs the pgqueue transport')
      const reply = (consoleApi.handles(path) && (await consoleApi.route(req, path))) || errorReply(404, `No route for ${path}`)
      return { ...reply, gzip: acceptsGzip(req) }
    }
    if (path !== MESSAGING_BASE && !path.startsWith(`${MESSAGING_BASE}/`)) return errorReply(404, `No route for ${path}`)
    const sub = path.slice(MESSAGING_BASE.length)
    const found = messagingRoute(method, sub)
    if (found === undefined) return errorReply(404, `No route for ${path}`)
    if (found === 'method') return errorReply(405, 'Method Not Allowed')
    if (!session) {
      if (sub === '/transport') return { status: 200, json: { transport: 'kafka' } }
      return errorReply(503, 'No pgQueue store: the messaging transport is kafka')
    }
    const url = new URL(req.url ?? '/', 'http://ops')
    return found(await session.connect(), { method, path: sub, query: url.searchParams, body: (keys) => readJsonObject(req, keys) })
  }

  const gate = createRequestGate(options)
  const isMounted = (path: string) => options.registryHandler !== undefined && (path === REGISTRY_MOUNT || path.startsWith(`${REGISTRY_MOUNT}/`))
  const mounted = (req: IncomingMessage, res: ServerResponse, path: string, next?: (err?: unknown) => void): boolean => {
    const registry = options.registryHandler
    if (!registry || !isMounted(path)) return false
    const target = normalize(registry.basePath)
    const mountedAt = basePath + REGISTRY_MOUNT
    if (target !== mountedAt) req.url = target + (req.url ?? '').slice(mountedAt.length)
    registry(req, res, next)
    return true
  }

  const handler = ((req, res, next) => {
    const pathname = (req.url ?? '/').split('?')[0]!
    const inside = basePath === '' || pathname === basePath || pathname.startsWith(`${basePath}/`)
    if (!inside) {
      if (next) return next()
      return send(res, errorReply(404, `No route for ${pathname}`))
    }
    const path = pathname.slice(basePath.length) || '/'
    if (consoleAssets && hostAllowed(req.headers.host) && consoleAssets.serve(req, res, path)) return
    const registry = isMounted(path)
    gate(req, registry ? REGISTRY_BODY_TYPES : JSON_BODY_TYPES)
      .then((rejected) => {
        if (rejected) return void send(res, rejection(rejected, registry))
        if (mounted(req, res, path, next)) return
        return route(req, path).then((reply) => send(res, reply))
      })
      .catch((err: unknown) => {
        const status = statusOf(err)
        if (status === 500) options.onError?.(err)
        if (res.headersSent) return void res.destroy()
        send(res, errorReply(status, (err as Error)?.message ?? String(err)))
      })
  }) as OpsHandler
  Object.defineProperties(handler, {
    basePath: { value: basePath },
    metrics: { value: metrics },
    consumers: { value: consumers },
    context: { value: ctx },
  })
  handler.health = health
  handler.close = async () => {
    metrics.setLagSource(undefined)
    await consoleApi?.close()
    await session?.close()
  }
  return handler
}
