import { DEFAULT_OPS_PORT, startOpsServer } from '../../ops/server.js'
import { createSchemaRegistryServer } from '../../registry/http/server.js'
import { CONNECTION_OPTIONS, flag, int, positionals, str, type Command } from '../args.js'
import { withKafka } from '../connect.js'

export const serveCommand: Command = {
  name: 'serve',
  summary: 'serve the operations HTTP API (health, metrics, lag, registrations, offset reset)',
  description:
    'Serves GET /health, GET /metrics and DataHub\'s /openapi/operations/messaging endpoints until Ctrl-C.\n' +
    'There is no authentication: keep the default loopback host or put a proxy in front.',
  options: {
    ...CONNECTION_OPTIONS,
    port: { type: 'string', short: 'p', value: 'port', help: `port (default ${DEFAULT_OPS_PORT}; 0 picks a free one)` },
    host: { type: 'string', value: 'host', help: 'address to listen on (default 127.0.0.1)' },
    'schema-registry': { type: 'boolean', help: 'also serve the schema registry under /schema-registry/api' },
  },
  examples: ['kafkajs-pgqueue serve --port 9464 --schema-registry', 'curl -s localhost:9464/openapi/operations/messaging/consumer/lag?detailed=true'],
  async run(p, io) {
    positionals(p, [])
    const port = int(p, 'port', { min: 0, max: 65535 }) ?? DEFAULT_OPS_PORT
    await withKafka(p, io, async ({ kafka, ctx }) => {
      const registryHandler = flag(p, 'schema-registry') ? createSchemaRegistryServer({ kafka, basePath: '/schema-registry/api' }) : undefined
      const server = await startOpsServer({ kafka, port, host: str(p, 'host'), registryHandler })
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
