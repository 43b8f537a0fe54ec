// Where the database connection comes from, in precedence order:
// explicit option > DATAHUB_PGQUEUE_DATASOURCE_URL (+ _USERNAME/_PASSWORD) > DATABASE_URL > PG* variables > embedded.
import type { ConnectionOptions } from 'node:tls'
import { invalid, readEnvNonEmpty } from './env.js'
import { maskedConnectionString, parseConnectionString, quotable, shownValue } from './connectionString.js'
import { envHostList, jdbcTarget, parseHost, sessionTarget, type SplitHosts } from './hostList.js'
import type { ConnectionConfig, PgQueueOptions, TargetSessionAttrs } from './types.js'

const PG_ENV = ['PGHOST', 'PGDATABASE', 'PGUSER', 'PGPORT', 'PGSERVICE'] as const

/** Query parameters node-postgres understands; JDBC-only ones (prepareThreshold, reWriteBatchedInserts, ...) are dropped. */
const PG_PARAMS = new Set([
  'sslmode',
  'ssl',
  'sslcert',
  'sslkey',
  'sslrootcert',
  'sslnegotiation',
  'user',
  'password',
  'options',
  'application_name',
  'client_encoding',
])
/** JDBC spellings of parameters pg knows under another name. */
const JDBC_ALIASES: Record<string, string> = { ApplicationName: 'application_name' }

const EXPECTED_URL = 'a postgres://, postgresql:// or jdbc:postgresql://host[:port]/database URL'
const UNENCODED = 'a URL whose password has @ / ? # percent-encoded (%40 %2F %3F %23): an @ past the host part leaves unknown where the password ends'

/** The query of `rest` (path?query#fragment) as written, and the parts around it. */
function splitRest(rest: string): { path: string; query: string[]; fragment: string } {
  const hash = rest.indexOf('#')
  const beforeHash = hash >= 0 ? rest.slice(0, hash) : rest
  const q = beforeHash.indexOf('?')
  return {
    path: q >= 0 ? beforeHash.slice(0, q) : beforeHash,
    query: q >= 0 ? beforeHash.slice(q + 1).split('&') : [],
    fragment: hash >= 0 ? rest.slice(hash) : '',
  }
}

/**
 * Reads a connection string once: postgres:// and postgresql:// URLs, and jdbc:postgresql://host:port/db?params (or
 * jdbc:postgresql:db, meaning localhost) converted to postgres:// with only the parameters pg understands. Host lists
 * and target_session_attrs (targetServerType) are taken out; every error shows the value as that same parse masks it
 * and quotes a part only when the parse says it cannot hold a secret.
 */
export function readConnectionString(raw: string, where: string): SplitHosts {
  const parts = parseConnectionString(raw)
  const shown = shownValue(parts)
  if (parts.scheme === undefined) return invalid(where, shown, EXPECTED_URL)
  if (parts.ambiguous) return invalid(where, shown, UNENCODED)
  const jdbc = /^jdbc:/i.test(parts.scheme)
  const entries = parts.hosts.length > 0 ? parts.hosts : [{ text: 'localhost', start: 0, end: 0 }]
  const hosts = entries.map((e, i) => parseHost(e.text, i, where, shown, parts.hosts.length > 0 ? quotable(parts, e) : e.text))
  const { path, query, fragment } = splitRest(parts.rest)
  let target: TargetSessionAttrs | undefined
  let url: string
  if (jdbc) {
    const kept = new URLSearchParams()
    for (const { key, value } of parts.params) {
      if (key === 'targetServerType') target = jdbcTarget(value, where, shown)
      const name = JDBC_ALIASES[key] ?? key
      if (PG_PARAMS.has(name)) kept.set(name, value)
    }
    const search = kept.size > 0 ? `?${kept.toString()}` : ''
    url = `postgres://${parts.userinfo}${entries[0]!.text}${parts.hosts.length > 0 ? path : `/${path.replace(/^\/+/, '')}`}${search}`
  } else {
    const param = parts.params.find((p) => p.key === 'target_session_attrs')
    if (param !== undefined) target = sessionTarget(param.value, where, shown)
    // as written, but for the first host and without target_session_attrs: pg reads the rest itself
    const rest = param === undefined ? query : query.filter((piece) => safeKey(piece) !== 'target_session_attrs')
    url = `${parts.scheme}${parts.userinfo}${entries[0]!.text}${path}${rest.length > 0 ? `?${rest.join('&')}` : ''}${fragment}`
  }
  if (!URL.canParse(url)) return invalid(where, shown, EXPECTED_URL)
  if (hosts.length === 1 && target === undefined) return { connectionString: url }
  return { connectionString: url, hosts, targetSessionAttrs: target ?? 'any' }
}

/** A query piece's parameter name, decoded where it can be. */
function safeKey(piece: string): string {
  const key = piece.split('=', 1)[0]!
  try {
    return decodeURIComponent(key)
  } catch {
    return key
  }
}

/** Puts user/password into the URL: pg lets the connection string override separate user/password fields. */
function withCredentials(connectionString: string, user?: string, password?: string): string {
  if (user === undefined && password === undefined) return connectionString
  const url = new URL(connectionString)
  // user/password query parameters would beat the userinfo in pg-connection-string.
  if (user !== undefined) {
    url.username = encodeURIComponent(user)
    url.searchParams.delete('user')
  }
  if (password !== undefined) {
    url.password = encodeURIComponent(password)
    url.searchParams.delete('password')
  }
  return url.toString()
}

/** `secret`: a wrong-typed value is named by its type only (a numeric password is still a password). */
function optionalString(raw: unknown, where: string, secret = false): string | undefined {
  if (raw === undefined) return undefined
  if (typeof raw !== 'string') return invalid(where, secret ? `<a ${raw === null ? 'null' : typeof raw}>` : raw, 'a string')
  return raw
}

function optionalSsl(raw: unknown, where: string): boolean | ConnectionOptions | undefined {
  if (raw === undefined || typeof raw === 'boolean') return raw
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) return { ...(raw as ConnectionOptions) }
  return invalid(where, raw, 'a boolean or a tls.ConnectionOptions object')
}

/** Chooses the connection source; option user/password/ssl pass through and win over the environment's. */
export function resolveConnection(options: PgQueueOptions, env: NodeJS.ProcessEnv): ConnectionConfig {
  const opt = options.connection ?? {}
  const shorthand = optionalString(options.connectionString, 'options.connectionString')
  const nested = optionalString(opt.connectionString, 'options.connection.connectionString')
  if (shorthand !== undefined && nested !== undefined && shorthand !== nested) {
    invalid(
      'options.connectionString',
      maskedConnectionString(shorthand),
      'to be omitted or equal options.connection.connectionString when both are given',
    )
  }
  const user = optionalString(opt.user, 'options.connection.user')
  const password = optionalString(opt.password, 'options.connection.password', true)
  const ssl = optionalSsl(opt.ssl, 'options.connection.ssl')

  let found: Omit<ConnectionConfig, 'connectionString'> & { read?: SplitHosts }
  const explicit = nested ?? shorthand
  const datasourceUrl = readEnvNonEmpty(env, 'DATAHUB_PGQUEUE_DATASOURCE_URL')
  const databaseUrl = readEnvNonEmpty(env, 'DATABASE_URL')
  if (explicit !== undefined) {
    const where = nested !== undefined ? 'options.connection.connectionString' : 'options.connectionString'
    found = { source: 'option', read: readConnectionString(explicit, where) }
  } else if (datasourceUrl !== undefined) {
    found = {
      source: 'datasource-url',
      read: readConnectionString(datasourceUrl, 'DATAHUB_PGQUEUE_DATASOURCE_URL'),
      user: readEnvNonEmpty(env, 'DATAHUB_PGQUEUE_DATASOURCE_USERNAME'),
      password: env.DATAHUB_PGQUEUE_DATASOURCE_PASSWORD || undefined,
    }
  } else if (databaseUrl !== undefined) {
    found = { source: 'database-url', read: readConnectionString(databaseUrl, 'DATABASE_URL') }
  } else if (PG_ENV.some((name) => readEnvNonEmpty(env, name) !== undefined)) {
    found = { source: 'pg-env' }
  } else {
    found = { source: 'embedded' }
  }

  const result: ConnectionConfig = { source: found.source }
  const finalUser = user ?? found.user
  const finalPassword = password ?? found.password
  if (found.read !== undefined) {
    result.connectionString = withCredentials(found.read.connectionString, finalUser, finalPassword)
    if (found.read.hosts) {
      result.hosts = found.read.hosts
      result.targetSessionAttrs = found.read.targetSessionAttrs
    }
  }
  if (found.source === 'pg-env') {
    const list = envHostList(env)
    if (list) Object.assign(result, list)
  }
  if (finalUser !== undefined) result.user = finalUser
  if (finalPassword !== undefined) result.password = finalPassword
  if (ssl !== undefined) result.ssl = ssl
  return result
}
