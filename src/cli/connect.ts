// One Kafka per CLI run, from the library's own configuration (environment) with --url / --schema / --prefix on top.
import type { Admin, logCreator as LogCreator } from 'kafkajs'
import type { Writable } from 'node:stream'
import type { PgQueueContext } from '../client/context.js'
import type { PgQueueOptions } from '../config/types.js'
import { Kafka } from '../kafka.js'
import { logLevel } from '../kafkajs/logger.js'
import { contextOf } from '../ops/context.js'
import { flag, str, type CliIO, type Parsed } from './args.js'

export const CLIENT_ID = 'kafkajs-pgqueue-cli'

export function pgqueueOptions(p: Parsed, extra: PgQueueOptions = {}): PgQueueOptions {
  const options: PgQueueOptions = { ...extra }
  const url = str(p, 'url')
  const schema = str(p, 'schema')
  const prefix = str(p, 'prefix')
  if (url !== undefined) options.connectionString = url
  if (schema !== undefined) options.schema = schema
  if (prefix !== undefined) options.tablePrefix = prefix
  return options
}

/** Every log line to stderr, so stdout carries only the command's output. */
export function stderrLogCreator(err: Writable): LogCreator {
  return () =>
    ({ namespace, label, log }) => {
      const { message, timestamp: _timestamp, logger: _logger, ...extra } = log as Record<string, unknown>
      const details = Object.keys(extra).length > 0 ? ` ${JSON.stringify(extra)}` : ''
      err.write(`${label} ${namespace ? `[${namespace}] ` : ''}${String(message)}${details}\n`)
    }
}

export function cliKafka(p: Parsed, io: CliIO, extra: PgQueueOptions = {}): Kafka {
  const kafka = new Kafka({
    clientId: CLIENT_ID,
    logLevel: flag(p, 'verbose') ? logLevel.INFO : logLevel.ERROR,
    logCreator: stderrLogCreator(io.stderr),
    pgqueue: pgqueueOptions(p, extra),
  })
  if (kafka.config.connection.source === 'embedded') {
    io.stderr.write(`Using the embedded PostgreSQL in ${kafka.config.embedded.dataDir} (set --url or DATABASE_URL to use your own)\n`)
  }
  return kafka
}

export interface CliSession {
  kafka: Kafka
  admin: Admin
  ctx: PgQueueContext
}

/** Connects an admin (which opens the pool and checks the schema), runs fn, disconnects. */
export async function withKafka<T>(p: Parsed, io: CliIO, fn: (s: CliSession) => Promise<T>, extra?: PgQueueOptions): Promise<T> {
  const kafka = cliKafka(p, io, extra)
  const admin = kafka.admin()
  await admin.connect()
  try {
    return await fn({ kafka, admin, ctx: contextOf(kafka)! })
  } finally {
    await admin.disconnect()
  }
}
