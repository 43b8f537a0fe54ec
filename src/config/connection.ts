// Where the database connection comes from, in precedence order:
// explicit option > DATAHUB_PGQUEUE_DATASOURCE_URL (+ _USERNAME/_PASSWORD) > DATABASE_URL > PG* variables > embedded.
import type { ConnectionOptions } from 'node:tls'
import { invalid, readEnvNonEmpty } from './env.js'
import { envHostList, firstHostOnly, hostPart, jdbcTarget, splitHostList } from './hostList.js'
import type { ConnectionConfig, PgQueueOptions } from './types.js'

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

/**
 * Converts jdbc:postgresql://host:port/db?params (or jdbc:postgresql:db, meaning localhost) to postgres://,
 * keeping only parameters pg understands. postgres:// and postgresql:// URLs pass through unchanged.
 */
/**
 * The URL as it may appear in an error. It is invalid, so nothing about its shape can be trusted: a password may
 * hold unencoded `@`, `/`, `&` or `#`. Everything from `//user:` to the last `@` is masked, and everything after a
 * `password=`; masking too much is fine, one character of a password too few is not.
 */
export function maskedUrl(raw: string): string {
  let out = raw.replace(/(password=).*$/is, '$1***')
  const start = out.indexOf('//')
  const at = out.lastIndexOf('@')
  if (start >= 0 && at > start) {
    const userinfo = out.slice(start + 2, at)
    const colon = userinfo.indexOf(':')
    out = `${out.slice(0, start + 2)}${colon >= 0 ? `${userinfo.slice(0, colon)}:***` : userinfo}${out.slice(at)}`
  }
  return out
}

export function toPostgresUrl(raw: string, where: string): string {
  const value = raw.trim()
  if (/^postgres(ql)?:\/\//i.test(value)) {
    if (!URL.canParse(firstHostOnly(value))) return invalid(where, maskedUrl(raw), EXPECTED_URL)
    return value
  }
  const jdbc = /^jdbc:postgresql:(.*)$/i.exec(value)
  if (!jdbc) return invalid(where, maskedUrl(raw), EXPECTED_URL)
  const rest = jdbc[1]!
  const authority = rest.startsWith('//') ? rest.slice(2) : `localhost/${rest.replace(/^\/+/, '')}`
  // host1:5432,host2:5432 failover lists are kept (src/config/hostList.ts); URL validates the first host's form
  const hosts = hostPart(`postgres://${authority}`)!
  const single = hosts.replace(hosts.hosts.split(',')[0]!)
  if (!URL.canParse(single)) return invalid(where, maskedUrl(raw), EXPECTED_URL)
  const url = new URL(single)
  const kept = new URLSearchParams()
  for (const [key, val] of url.searchParams) {
    if (key === 'targetServerType') kept.set('target_session_attrs', jdbcTarget(val, where, maskedUrl(raw)))
    const name = JDBC_ALIASES[key] ?? key
    if (PG_PARAMS.has(name)) kept.set(name, val)
  }
  url.search = kept.toString()
  return hostPart(url.toString())!.replace(hosts.hosts)
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

function optionalString(raw: unknown, where: string): string | undefined {
  if (raw === undefined) return undefined
  if (typeof raw !== 'string') return invalid(where, raw, 'a string')
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
    invalid('options.connectionString', shorthand, 'to be omitted or equal options.connection.connectionString when both are given')
  }
  const user = optionalString(opt.user, 'options.connection.user')
  const password = optionalString(opt.password, 'options.connection.password')
  const ssl = optionalSsl(opt.ssl, 'options.connection.ssl')

  let found: ConnectionConfig & { where?: string }
  const explicit = nested ?? shorthand
  const datasourceUrl = readEnvNonEmpty(env, 'DATAHUB_PGQUEUE_DATASOURCE_URL')
  const databaseUrl = readEnvNonEmpty(env, 'DATABASE_URL')
  if (explicit !== undefined) {
    const where = nested !== undefined ? 'options.connection.connectionString' : 'options.connectionString'
    found = { source: 'option', connectionString: toPostgresUrl(explicit, where), where }
  } else if (datasourceUrl !== undefined) {
    found = {
      source: 'datasource-url',
      connectionString: toPostgresUrl(datasourceUrl, 'DATAHUB_PGQUEUE_DATASOURCE_URL'),
      where: 'DATAHUB_PGQUEUE_DATASOURCE_URL',
      user: readEnvNonEmpty(env, 'DATAHUB_PGQUEUE_DATASOURCE_USERNAME'),
      password: env.DATAHUB_PGQUEUE_DATASOURCE_PASSWORD || undefined,
    }
  } else if (databaseUrl !== undefined) {
    found = { source: 'database-url', connectionString: toPostgresUrl(databaseUrl, 'DATABASE_URL'), where: 'DATABASE_URL' }
  } else if (PG_ENV.some((name) => readEnvNonEmpty(env, name) !== undefined)) {
    found = { source: 'pg-env' }
  } else {
    found = { source: 'embedded' }
  }

  const result: ConnectionConfig = { source: found.source }
  const finalUser = user ?? found.user
  const finalPassword = password ?? found.password
  if (found.connectionString !== undefined) {
    const split = splitHostList(found.connectionString, found.where ?? found.source, maskedUrl(found.connectionString))
    result.connectionString = withCredentials(split.connectionString, finalUser, finalPassword)
    if (split.hosts) {
      result.hosts = split.hosts
      result.targetSessionAttrs = split.targetSessionAttrs
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
