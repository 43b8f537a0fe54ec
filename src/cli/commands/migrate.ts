import pg from 'pg'
import { migrationTokens } from '../../client/context.js'
import { resolveConfig } from '../../config/resolve.js'
import { resolvePoolConfig } from '../../db/connection.js'
import { findPendingMigrations, migrate } from '../../store/migrator.js'
import { tablesFor } from '../../db/tables.js'
import { storeFor } from '../../store/handle.js'
import { CONNECTION_OPTIONS, JSON_OPTION, flag, positionals, type Command } from '../args.js'
import { pgqueueOptions } from '../connect.js'
import { writeJson } from '../format.js'

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'create or upgrade the queue schema (DataHub pgQueue layout)',
  description:
    'Creates or upgrades the queue schema: applies pending migrations in one transaction and premakes message partitions.\n' +
    'Safe to run from several processes at once; every script runs once.',
  options: {
    ...CONNECTION_OPTIONS,
    ...JSON_OPTION,
    'dry-run': { type: 'boolean', help: 'list the pending migrations without applying them' },
  },
  examples: ['kafkajs-pgqueue migrate --url postgres://postgres@localhost/app', 'kafkajs-pgqueue migrate --dry-run --json'],
  async run(p, io) {
    positionals(p, [])
    const config = resolveConfig(pgqueueOptions(p))
    const tables = tablesFor(config.schema, config.tablePrefix)
    const opts = { schema: tables.schema, prefix: tables.prefix, tokens: migrationTokens(config) }
    const log = (msg: string) => flag(p, 'verbose') && io.stderr.write(`${msg}\n`)
    const { poolConfig, embedded } = await resolvePoolConfig(config, log)
    const pool = new pg.Pool({ ...poolConfig, max: 1, min: 0 })
    pool.on('error', () => undefined)
    try {
      if (flag(p, 'dry-run')) {
        const pending = await findPendingMigrations(pool, opts)
        if (flag(p, 'json')) writeJson(io.stdout, { schema: tables.schema, prefix: tables.prefix, pending })
        else if (pending.length === 0) io.stdout.write(`Schema "${tables.schema}" (prefix "${tables.prefix}") is up to date\n`)
        else io.stdout.write(`Pending migrations for schema "${tables.schema}":\n${pending.map((s) => `  ${s}\n`).join('')}`)
        return
      }
      const client = await pool.connect()
      try {
        io.stderr.write(`Migrating schema "${tables.schema}" (prefix "${tables.prefix}")…\n`)
        const { applied } = await migrate(client, { ...opts, log })
        const partitionsCreated = await storeFor({ pool, tables }, client).partitions.ensurePartitions()
        if (flag(p, 'json')) writeJson(io.stdout, { schema: tables.schema, prefix: tables.prefix, applied, partitionsCreated })
        else if (applied.length === 0) io.stdout.write(`Schema "${tables.schema}" is up to date\n`)
        else io.stdout.write(`Applied to schema "${tables.schema}":\n${applied.map((s) => `  ${s}\n`).join('')}`)
      } finally {
        client.release()
      }
    } finally {
      await pool.end()
      await embedded?.stop()
    }
  },
}
