// The web console served by the ops server at `/`: the bundled page and its files (./assets.ts) and the JSON API it
// reads (./api.ts). Built on the handler's own session, so it shares the context, the request gate and `authorize`.
import type { IncomingMessage } from 'node:http'
import type { Admin, Producer } from 'kafkajs'
import { createAdmin } from '../admin/index.js'
import type { PgQueueContext } from '../client/context.js'
import type { OpsSession } from '../ops/context.js'
import { readJsonObject, type Reply } from '../ops/http/io.js'
import type { RequestCheck } from '../ops/http/gate.js'
import { createProducer } from '../producer/index.js'
import { createAvroCodec } from '../registry/avroCodec.js'
import { PgSchemaRegistry } from '../registry/registry.js'
import { API_PREFIX, consoleApi, type ConsoleDeps } from './api.js'

export { loadConsoleAssets } from './assets.js'

export interface ConsoleApi {
  /** true for paths under /console/api */
  handles(path: string): boolean
  /** the reply; undefined for an unknown console path */
  route(req: IncomingMessage, path: string): Promise<Reply | undefined>
  /** disconnects the console's admin and producer */
  close(): Promise<void>
}

const CLIENT_ID = 'kafkajs-pgqueue-console'

export function createConsoleApi(session: OpsSession, authorize: RequestCheck | undefined): ConsoleApi {
  let deps: ConsoleDeps | undefined
  let admin: Admin | undefined
  let producer: Promise<Producer> | undefined
  const depsFor = (ctx: PgQueueContext): ConsoleDeps => {
    if (!deps) {
      admin = createAdmin(ctx, ctx.logger, {}, CLIENT_ID)
      const registry = new PgSchemaRegistry(ctx.db.pool, ctx.tables)
      deps = {
        ctx,
        admin,
        registry,
        codec: createAvroCodec(registry),
        producer: () =>
          (producer ??= (async () => {
            const p = createProducer(ctx, ctx.logger, {}, CLIENT_ID)
            await p.connect()
            return p
          })().catch((err: unknown) => {
            producer = undefined
            throw err
          })),
      }
    }
    return deps
  }
  return {
    handles: (path) => path === API_PREFIX || path.startsWith(`${API_PREFIX}/`),
    async route(req, path) {
      const ctx = await session.connect()
      const url = new URL(req.url ?? '/', 'http://console')
      return consoleApi(depsFor(ctx), path.slice(API_PREFIX.length), {
        method: req.method ?? 'GET',
        query: url.searchParams,
        body: (keys) => readJsonObject(req, keys),
        canAct: async () => (authorize ? authorize(req) : true),
      })
    },
    async close() {
      const p = producer
      producer = undefined
      await (await p?.catch(() => undefined))?.disconnect()
      await admin?.disconnect()
    },
  }
}
