// The registry's HTTP face: a node:http request handler that answers under a base path (so an application or
// the operations server can mount it next to other routes), and a stand-alone server for convenience.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PgSchemaRegistry } from '../registry.js'
import type { RegistryBackend } from '../backend.js'
import { isStorableText } from '../../db/text.js'
import { invalidSchema } from '../errors.js'
import { createRequestGate, requireCredentials, type RequestGateOptions } from '../../ops/http/gate.js'
import { errorReply, readJsonBody, REGISTRY_BODY_TYPES, send } from './io.js'
import { registryRoutes } from './routes.js'
import type { Router } from './router.js'

export type SchemaRegistryServerOptions = (RegistryBackend | { registry: PgSchemaRegistry }) & {
  /** where the API lives, e.g. `/schema-registry/api` (DataHub's path); default: the root */
  basePath?: string
  /** called with unexpected (50001) failures, e.g. to log them */
  onError?: (err: unknown) => void
}

export interface SchemaRegistryHandler {
  /** Answers requests under the base path; others go to `next` when given, else get a 404. */
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): void
  readonly basePath: string
  /** true when the URL is under the base path */
  handles(url: string | undefined): boolean
  /** the registry behind the handler, opened on first use */
  registry(): Promise<PgSchemaRegistry>
  /** releases the backend (a registry passed in is left open) */
  close(): Promise<void>
}

export function normalizeBasePath(basePath = ''): string {
  const trimmed = basePath.replace(/\/+$/, '')
  return trimmed === '' ? '' : trimmed.startsWith('/') ? trimmed : `/${trimmed}`
}

export function createSchemaRegistryServer(options: SchemaRegistryServerOptions): SchemaRegistryHandler {
  const basePath = normalizeBasePath(options.basePath)
  const owned = !('registry' in options)
  let opening: Promise<{ registry: PgSchemaRegistry; router: Router }> | undefined
  const open = () =>
    (opening ??= (async () => {
      const registry = 'registry' in options ? options.registry : await PgSchemaRegistry.open(options)
      return { registry, router: registryRoutes(registry) }
    })().catch((err) => {
      opening = undefined // a failed open (database down) is retried by the next request
      throw err
    }))

  const relativePath = (url: string | undefined): string | undefined => {
    const pathname = (url ?? '/').split('?')[0]!
    if (basePath === '') return pathname
    if (pathname === basePath) return '/'
    return pathname.startsWith(`${basePath}/`) ? pathname.slice(basePath.length) : undefined
  }

  const handle = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    let schema = '?'
    try {
      const { registry, router } = await open()
      schema = registry.tables.schema
      const match = router.match(req.method ?? 'GET', path)
      if (match.kind === 'not-found') return send(res, { status: 404, json: { error_code: 404, message: 'HTTP 404 Not Found' } })
      if (match.kind === 'method-not-allowed') {
        return send(res, { status: 405, json: { error_code: 405, message: 'HTTP 405 Method Not Allowed' } })
      }
      const query = new URL(req.url ?? '/', 'http://registry').searchParams
      // a subject (or prefix) PostgreSQL cannot store cannot exist: refuse it before any SQL
      const texts = [...Object.values(match.params), ...query.values()]
      if (!texts.every(isStorableText)) throw invalidSchema('Invalid subject or parameter: it must be well-formed Unicode without NUL characters')
      send(res, await match.handler({ params: match.params, query, body: () => readJsonBody(req) }))
    } catch (err) {
      const { reply, internal } = errorReply(err, schema)
      if (internal) options.onError?.(err)
      if (!res.headersSent) send(res, reply)
      else res.destroy()
    }
  }

  const handler = ((req, res, next) => {
    const path = relativePath(req.url)
    if (path === undefined) {
      if (next) return next()
      return send(res, { status: 404, json: { error_code: 404, message: 'HTTP 404 Not Found' } })
    }
    void handle(req, res, path)
  }) as SchemaRegistryHandler
  Object.defineProperty(handler, 'basePath', { value: basePath, enumerable: true })
  handler.handles = (url) => relativePath(url) !== undefined
  handler.registry = async () => (await open()).registry
  handler.close = async () => {
    const pending = opening
    opening = undefined
    if (!pending || !owned) return
    const opened = await pending.catch(() => undefined)
    await opened?.registry.close()
  }
  return handler
}

export interface StartedSchemaRegistry {
  /** base URL for clients, e.g. http://127.0.0.1:8081/schema-registry/api */
  url: string
  port: number
  handler: SchemaRegistryHandler
  close(): Promise<void>
}

/**
 * Starts a stand-alone HTTP server (port 0 = a free port; host defaults to 127.0.0.1). Every request passes the ops
 * server's gate (Host allow-list, `token` / `authenticate`, Origin and media type for changes, `authorize`); any host
 * but a loopback one needs credentials.
 */
export async function startSchemaRegistry(
  options: SchemaRegistryServerOptions & RequestGateOptions & { port?: number; host?: string },
): Promise<StartedSchemaRegistry> {
  const host = options.host ?? '127.0.0.1'
  requireCredentials(host, options, 'the schema registry')
  const handler = createSchemaRegistryServer(options)
  const gate = createRequestGate({ listenHost: host, ...options })
  const server = createServer((req, res) => {
    gate(req, REGISTRY_BODY_TYPES).then(
      (refused) =>
        refused ? send(res, { status: refused.status, json: { error_code: refused.status, message: refused.message } }) : handler(req, res),
      () => res.destroy(),
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, host, () => resolve())
  })
  const { port } = server.address() as AddressInfo
  const urlHost = host.includes(':') ? `[${host}]` : host
  return {
    url: `http://${urlHost}:${port}${handler.basePath}`,
    port,
    handler,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections() // keep-alive clients would hold close() open
      await closed
      await handler.close()
    },
  }
}
