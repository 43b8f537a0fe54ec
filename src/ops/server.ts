import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { requireCredentials } from './http/gate.js'
import { createOpsHandler, type OpsHandler, type OpsHandlerOptions } from './http/handler.js'

export interface OpsServerOptions extends OpsHandlerOptions {
  /** default 9464; 0 picks a free port */
  port?: number
  /**
   * default 127.0.0.1. Any other than a loopback address needs credentials (`token` or `authenticate`): the API
   * resets offsets and registers schemas. Behind an authenticating proxy, say so with `authenticate: () => true`.
   */
  host?: string
}

export interface OpsServer {
  /** e.g. http://127.0.0.1:9464 (plus the base path) */
  readonly url: string
  readonly port: number
  readonly server: Server
  readonly handler: OpsHandler
  close(): Promise<void>
}

export const DEFAULT_OPS_PORT = 9464

/** Serves createOpsHandler on its own port. */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const { port = DEFAULT_OPS_PORT, host = '127.0.0.1', ...handlerOptions } = options
  requireCredentials(host, handlerOptions, 'the operations API')
  const handler = createOpsHandler({ listenHost: host, ...handlerOptions })
  const server = createServer((req, res) => handler(req, res))
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => {
        server.off('error', reject)
        resolve()
      })
    })
  } catch (err) {
    await handler.close()
    throw err
  }
  const bound = (server.address() as AddressInfo).port
  const shownHost = host.includes(':') ? `[${host}]` : host
  return {
    url: `http://${shownHost}:${bound}${handler.basePath}`,
    port: bound,
    server,
    handler,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections() // keep-alive clients would hold close() open
      await closed
      await handler.close()
    },
  }
}
