import pg from 'pg'
import { parseConnectionString, shownValue } from '../config/connectionString.js'
import { describeHosts } from '../config/hostList.js'
import type { PgQueueConfig } from '../config/types.js'
import { hostSelectingClient, HostSelector } from './connectionHosts.js'
import { ensureEmbeddedPostgres } from './embedded.js'

export const APPLICATION_NAME = 'kafkajs-pgqueue'

export interface ResolvedPool {
  poolConfig: pg.PoolConfig
  /** a connection outside the pool (LISTEN) with the pool's settings; follows the host list when there is one */
  newClient(): pg.Client
  /** set when an embedded server backs the pool; stop it after the pool has ended */
  embedded?: { stop(): Promise<void> }
}

/** node-postgres pool settings from the validated config; starts the embedded server when that is the source. */
export async function resolvePoolConfig(config: PgQueueConfig, log: (msg: string) => void = () => {}): Promise<ResolvedPool> {
  const { connection, pool } = config
  const poolConfig: pg.PoolConfig = {
    max: pool.max,
    min: pool.min,
    idleTimeoutMillis: pool.idleTimeoutMillis,
    connectionTimeoutMillis: pool.connectionTimeoutMillis,
    maxLifetimeSeconds: pool.maxLifetimeSeconds,
    application_name: APPLICATION_NAME,
  }
  if (pool.statementTimeoutMillis > 0) poolConfig.statement_timeout = pool.statementTimeoutMillis
  if (pool.lockTimeoutMillis > 0) poolConfig.lock_timeout = pool.lockTimeoutMillis

  switch (connection.source) {
    case 'embedded': {
      // shared: several clients (in this or other processes) may use one data dir; the last stop() ends it
      const server = await ensureEmbeddedPostgres({ dataDir: config.embedded.dataDir, port: config.embedded.port, log, shared: true })
      poolConfig.connectionString = server.connectionString
      log(`PostgreSQL: ${redactConnectionString(server.connectionString)} (embedded)`)
      return { poolConfig, newClient: () => new pg.Client(poolConfig), embedded: server }
    }
    case 'pg-env': {
      // leave host, port, user, database and password unset: pg reads PG* itself
      if (connection.user !== undefined) poolConfig.user = connection.user
      if (connection.password !== undefined) poolConfig.password = connection.password
      // a copy: the config is frozen and pg writes into the ssl object (mutual TLS)
      if (connection.ssl !== undefined) poolConfig.ssl = typeof connection.ssl === 'object' ? { ...connection.ssl } : connection.ssl
      const env = process.env
      log(
        `PostgreSQL: ${env.PGHOST ?? 'localhost'}:${env.PGPORT ?? 5432}/${env.PGDATABASE ?? '(default)'} as ${
          connection.user ?? env.PGUSER ?? '(default user)'
        } (PG* environment)`,
      )
      return withHostList(poolConfig, config, log)
    }
    default: {
      if (!connection.connectionString) {
        throw new Error(`connection source '${connection.source}' has no connection string`)
      }
      poolConfig.connectionString = applyOverrides(connection.connectionString, connection)
      // a copy: the config is frozen and pg writes into the ssl object (mutual TLS)
      if (connection.ssl !== undefined) poolConfig.ssl = typeof connection.ssl === 'object' ? { ...connection.ssl } : connection.ssl
      const who = connection.user !== undefined ? ` as ${connection.user}` : ''
      log(`PostgreSQL: ${redactConnectionString(connection.connectionString)}${who} (${connection.source})`)
      return withHostList(poolConfig, config, log)
    }
  }
}

/** With a host list, every connection (pooled and LISTEN) asks one shared selector which host to connect to. */
function withHostList(poolConfig: pg.PoolConfig, { connection, pool }: PgQueueConfig, log: (msg: string) => void): ResolvedPool {
  if (!connection.hosts) return { poolConfig, newClient: () => new pg.Client(poolConfig) }
  const target = connection.targetSessionAttrs ?? 'any'
  log(`PostgreSQL hosts: ${describeHosts(connection.hosts)} (target_session_attrs=${target})`)
  const selector = new HostSelector({
    hosts: connection.hosts,
    target,
    clientConfig: { ...poolConfig },
    probeTimeoutMs: pool.connectionTimeoutMillis > 0 ? pool.connectionTimeoutMillis : 5000,
    log,
  })
  const Client = hostSelectingClient(selector)
  poolConfig.Client = Client
  return { poolConfig, newClient: () => new Client(poolConfig) }
}

// ssl-related URL parameters that pg would otherwise let win over an explicit `ssl` option
const SSL_PARAMS = ['ssl', 'sslmode', 'sslcert', 'sslkey', 'sslrootcert', 'uselibpqcompat']

/**
 * pg lets values parsed from the connection string override explicit options (even an absent user
 * parses as ''), so user and password overrides are written into the URL and ssl parameters removed.
 */
function applyOverrides(connectionString: string, o: PgQueueConfig['connection']): string {
  if (o.user === undefined && o.password === undefined && o.ssl === undefined) return connectionString
  let url: URL
  try {
    url = new URL(connectionString)
  } catch {
    throw new Error('connection string is not a valid URL; user/password/ssl overrides need postgres://host/db form')
  }
  if (o.user !== undefined) {
    url.username = encodeURIComponent(o.user)
    url.searchParams.delete('user')
  }
  if (o.password !== undefined) {
    url.password = encodeURIComponent(o.password)
    url.searchParams.delete('password')
  }
  if (o.ssl !== undefined) for (const p of SSL_PARAMS) url.searchParams.delete(p)
  return url.toString()
}

/**
 * `postgres://user@host:port/db` for logs: no password, no query parameters (they may hold one). Unparseable input
 * is not echoed back at all, and a string whose password's end is unknown is shown as src/config/connectionString.ts
 * masks it, never as URL would split it.
 */
export function redactConnectionString(connectionString: string): string {
  const parts = parseConnectionString(connectionString)
  if (parts.ambiguous) return shownValue(parts)
  let url: URL
  try {
    url = new URL(connectionString.replace(/^jdbc:/, ''))
  } catch {
    return '<unparseable connection string>'
  }
  if (!/^postgres(ql)?:$/.test(url.protocol) && url.protocol !== 'socket:') return '<unparseable connection string>'
  const q = url.searchParams
  const user = decode(url.username) || q.get('user') || ''
  const host = url.hostname || q.get('host') || 'localhost'
  const port = url.port || q.get('port') || ''
  const db = decode(url.pathname.replace(/^\//, '')) || q.get('db') || q.get('database') || ''
  const hostPort = host.startsWith('/') ? host : port ? `${host}:${port}` : host
  return `postgres://${user ? `${user}@` : ''}${hostPort}/${db}`
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}
