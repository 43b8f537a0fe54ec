// libpq-style host lists: `postgres://user@h1:5432,h2:5433/db?target_session_attrs=read-write` (and the JDBC form
// `jdbc:postgresql://h1,h2/db?targetServerType=primary`). node-postgres connects to one host only, so the list is
// taken out of the URL (src/config/connection.ts): the URL keeps the first host and the list travels beside it to
// src/db/connectionHosts.ts, which picks the host for every new connection.
import { invalid } from './env.js'
import type { ConnectionHost, TargetSessionAttrs } from './types.js'

/** What libpq accepts that a queue client can use: it must write, so read-only targets are refused. */
const TARGETS: Record<string, TargetSessionAttrs> = { any: 'any', 'read-write': 'read-write', primary: 'primary' }
/** pgjdbc's targetServerType, in libpq's terms (pgjdbc's `primary` checks transaction_read_only, as read-write does). */
const JDBC_TARGETS: Record<string, TargetSessionAttrs> = { any: 'any', primary: 'read-write', master: 'read-write' }

export interface SplitHosts {
  /** the URL with the first host only and without target_session_attrs */
  connectionString: string
  /** every host in order, when there is more than one or a target was asked for */
  hosts?: ConnectionHost[]
  targetSessionAttrs?: TargetSessionAttrs
}

/**
 * One `host[:port]` entry. `quoted` is the entry as an error may quote it, undefined when it may hold part of a
 * password (the error then names its position instead); `shown` is the whole value as errors show it.
 */
export function parseHost(part: string, index: number, where: string, shown: string, quoted: string | undefined): ConnectionHost {
  const entry = quoted === undefined ? `entry ${index + 1}` : `entry ${JSON.stringify(quoted)}`
  const m = /^(\[[^\]]+\]|[^:[\]]*)(?::(\d*))?$/.exec(part)
  if (!m || m[1] === '') return invalid(where, shown, `a host list of host[:port] entries separated by commas (bad ${entry})`)
  const port = m[2] ? Number(m[2]) : undefined
  if (port !== undefined && (port < 1 || port > 65535)) return invalid(where, shown, `ports between 1 and 65535 (bad ${entry})`)
  if (m[1]!.startsWith('[')) return port === undefined ? { host: m[1]!.slice(1, -1) } : { host: m[1]!.slice(1, -1), port }
  let host: string
  try {
    host = decodeURIComponent(m[1]!)
  } catch {
    return invalid(where, shown, `a host list of host[:port] entries separated by commas (bad percent-encoding in ${entry})`)
  }
  return port === undefined ? { host } : { host, port }
}

/** libpq's target_session_attrs in a URL or PGTARGETSESSIONATTRS. */
export function sessionTarget(value: string, where: string, shown: string): TargetSessionAttrs {
  return (
    TARGETS[value] ??
    invalid(where, shown, 'target_session_attrs any, read-write or primary (pgQueue writes: read-only, standby and prefer-standby cannot serve it)')
  )
}

/**
 * libpq's environment form of a host list: PGHOST=h1,h2 with PGPORT either one port for all or one per host, and
 * PGTARGETSESSIONATTRS. Undefined when PGHOST names one host and no target is asked for (pg reads PG* itself then).
 */
export function envHostList(env: NodeJS.ProcessEnv): { hosts: ConnectionHost[]; targetSessionAttrs: TargetSessionAttrs } | undefined {
  const hostVar = env.PGHOST?.trim() ?? ''
  const rawTarget = env.PGTARGETSESSIONATTRS?.trim() || undefined
  const names = hostVar.split(',')
  if (names.length === 1 && rawTarget === undefined) return undefined
  const ports = (env.PGPORT?.trim() ?? '').split(',')
  if (ports.length > 1 && ports.length !== names.length) {
    invalid('PGPORT', env.PGPORT, `one port, or one per PGHOST entry (${names.length})`)
  }
  const hosts = names.map((name, i) => {
    const port = ports.length > 1 ? ports[i]! : ports[0]!
    const entry = `${name.trim() || 'localhost'}${port.trim() ? `:${port.trim()}` : ''}`
    return parseHost(entry, i, 'PGHOST', hostVar, entry)
  })
  const targetSessionAttrs = rawTarget === undefined ? 'any' : sessionTarget(rawTarget, 'PGTARGETSESSIONATTRS', rawTarget)
  return { hosts, targetSessionAttrs }
}

/** pgjdbc's targetServerType as a libpq target_session_attrs value; unknown or read-only targets are refused. */
export function jdbcTarget(value: string, where: string, shown: string): TargetSessionAttrs {
  return JDBC_TARGETS[value] ?? invalid(where, shown, 'targetServerType any, primary or master (pgQueue writes: secondary targets cannot serve it)')
}

/** `h1:5432, h2` for logs. */
export function describeHosts(hosts: readonly ConnectionHost[]): string {
  return hosts.map((h) => (h.port === undefined ? h.host : `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}`)).join(', ')
}
