import { OPS_TOKEN_ENV, readToken } from '../../ops/http/auth.js'
import { requireCredentials } from '../../ops/http/gate.js'
import { DEFAULT_OPS_PORT, startOpsServer } from '../../ops/server.js'
import { createSchemaRegistryServer } from '../../registry/http/server.js'
import { CONNECTION_OPTIONS, UsageError, flag, int, list, positionals, str, type Command } from '../args.js'
import { withKafka } from '../connect.js'

export const serveCommand: Command = {
  name: 'serve',
  summary: 'serve the operations HTTP API (health, metrics, lag, registrations, offset reset) and the web console',
  description:
    "Serves GET /health, GET /metrics, DataHub's /openapi/operations/messaging endpoints and the web console at /\n" +
    '(docs/console.md) until Ctrl-C.\n' +
    `With a token (${OPS_TOKEN_ENV} or --token-file) every request needs \`Authorization: Bearer <token>\`; any host\n` +
    'but a loopback one needs a token. Only loopback names (and the listen address) are answered in the Host header,\n' +
    'state-changing requests need a JSON body type and no cross-site Origin (docs/security.md).',
  options: {
    ...CONNECTION_OPTIONS,
    port: { type: 'string', short: 'p', value: 'port', help: `port (default ${DEFAULT_OPS_PORT}; 0 picks a free one)` },
    host: { type: 'string', value: 'host', help: 'address to listen on (default 127.0.0.1; any other needs a token)' },
    'token-file': { type: 'string', value: 'path', help: `file whose first line is the bearer token (else ${OPS_TOKEN_ENV})` },
    'allowed-host': { type: 'string', value: 'name', multiple: true, help: 'a Host header name to answer besides loopback ones (* = any)' },
    'allowed-origin': { type: 'string', value: 'origin', multiple: true, help: 'an origin (https://console.example) allowed to send changes' },
    'schema-registry': { type: 'boolean', help: 'also serve the schema registry under /schema-registry/api' },
  },
  examples: ['kafkajs-pgqueue serve --port 9464 --schema-registry', 'curl -s localhost:9464/openapi/operations/messaging/consumer/lag?detailed=true'],
  async run(p, io) {
    positionals(p, [])
    const port = int(p, 'port', { min: 0, max: 65535 }) ?? DEFAULT_OPS_PORT
    const token = asUsage(() => readToken(str(p, 'token-file')))
    const host = str(p, 'host') ?? '127.0.0.1'
    asUsage(() => requireCredentials(host, { token }, 'the operations API'))
    await withKafka(p, io, async ({ kafka, ctx }) => {
      const registryHandler = flag(p, 'schema-registry') ? createSchemaRegistryServer({ kafka, basePath: '/schema-registry/api' }) : undefined
      const server = await startOpsServer({
        kafka,
        port,
        host,
        registryHandler,
        token,
        allowedHosts: list(p, 'allowed-host'),
        allowedOrigins: list(p, 'allowed-origin'),
      }).catch((err: unknown) => asUsage(() => Promise.reject(err)))
      // maintenance runs on the client's own schedule (DATAHUB_PGQUEUE_MAINTENANCE_*); count its runs in /metrics
      const unsubscribe = ctx.onMaintenanceReport((report) => server.handler.metrics.recordMaintenance(report))
      try {
        io.stdout.write(`Serving on ${server.url}\n`)
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve)
          process.once('SIGTERM', resolve)
        })
        io.stderr.write('Stopping…\n')
      } finally {
        unsubscribe()
        await server.close()
        await registryHandler?.close()
      }
    })
  },
}

/** Our configuration errors (TypeError) are usage errors: printed with the help, exit code 2. */
function asUsage<T>(fn: () => T): T {
  const rethrow = (err: unknown): never => {
    throw err instanceof TypeError ? new UsageError(err.message) : err
  }
  try {
    const value = fn()
    return (value instanceof Promise ? value.catch(rethrow) : value) as T
  } catch (err) {
    return rethrow(err)
  }
}
