// libpq-style host lists: `postgres://user@h1:5432,h2:5433/db?target_session_attrs=read-write` (and the JDBC form
// `jdbc:postgresql://h1,h2/db?targetServerType=primary`). node-postgres connects to one host only, so the list is
// taken out of the URL here: the URL keeps the first host (everything that parses it for logs and overrides still
// works) and the list travels beside it to src/db/connectionHosts.ts, which picks the host for every new connection.
import { invalid } from './env.js'
import type { ConnectionHost, TargetSessionAttrs } from './types.js'

/** What libpq accepts that a queue client can use: it must write, so read-only targets are refused. */
const TARGETS: Record<string, TargetSessionAttrs> = { any: 'any', 'read-write': 'read-write', primary: 'primary' }
/** pgjdbc's targetServerType, in libpq's terms (pgjdbc's `primary` checks transaction_read_only, as read-write does). */
const JDBC_TARGETS: Record<string, TargetSessionAttrs> = { any: 'any', primary: 'read-write', master: 'read-write' }

const AUTHORITY = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/is

export interface SplitHosts {
  /** the URL with the first host only and without target_session_attrs */
  connectionString: string
  /** every host in order, when there is more than one or a target was asked for */
  hosts?: ConnectionHost[]
  targetSessionAttrs?: TargetSessionAttrs
}

function parseHost(part: string, where: string, shown: string): ConnectionHost {
  const m = /^(\[[^\]]+\]|[^:[\]]*)(?::(\d*))?$/.exec(part)
  if (!m || m[1] === '') return invalid(where, shown, `a host list of host[:port] entries separated by commas (bad entry ${JSON.stringify(part)})`)
  const port = m[2] ? Number(m[2]) : undefined
  if (port !== undefined && (port < 1 || port > 65535)) return invalid(where, shown, `ports between 1 and 65535 (got ${m[2]})`)
  const host = m[1]!.startsWith('[') ? m[1]!.slice(1, -1) : decodeURIComponent(m[1]!)
  return port === undefined ? { host } : { host, port }
}

/**
 * Splits a postgres:// URL whose authority may list several hosts. `where` names the setting for errors, `shown` is
 * the URL as errors may show it (masked). A URL with one host and no target_session_attrs comes back unchanged.
 */
export function splitHostList(url: string, where: string, shown: string): SplitHosts {
  const m = AUTHORITY.exec(url)
  if (!m) return { connectionString: url }
  const [, prefix, authority, rest] = m as unknown as [string, string, string, string]
  const at = authority.lastIndexOf('@')
  const userinfo = at >= 0 ? authority.slice(0, at + 1) : ''
  const parts = (at >= 0 ? authority.slice(at + 1) : authority).split(',')
  const query = rest.indexOf('?')
  const params = new URLSearchParams(query >= 0 ? rest.slice(query + 1).replace(/#.*$/s, '') : '')
  const rawTarget = params.get('target_session_attrs')
  if (parts.length === 1 && rawTarget === null) return { connectionString: url }

  const hosts = parts.map((p) => parseHost(p, where, shown))
  let targetSessionAttrs: TargetSessionAttrs = 'any'
  if (rawTarget !== null) {
    targetSessionAttrs =
      TARGETS[rawTarget] ??
      invalid(where, shown, 'target_session_attrs any, read-write or primary (pgQueue writes: read-only, standby and prefer-standby cannot serve it)')
  }
  let tail = rest
  if (rawTarget !== null) {
    params.delete('target_session_attrs')
    const path = query >= 0 ? rest.slice(0, query) : rest
    tail = params.size > 0 ? `${path}?${params.toString()}` : path
  }
  return { connectionString: `${prefix}${userinfo}${parts[0]!}${tail}`, hosts, targetSessionAttrs }
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
    return parseHost(`${name.trim() || 'localhost'}${port.trim() ? `:${port.trim()}` : ''}`, 'PGHOST', hostVar)
  })
  const targetSessionAttrs =
    rawTarget === undefined
      ? 'any'
      : (TARGETS[rawTarget] ??
        invalid(
          'PGTARGETSESSIONATTRS',
          rawTarget,
          'any, read-write or primary (pgQueue writes: read-only, standby and prefer-standby cannot serve it)',
        ))
  return { hosts, targetSessionAttrs }
}

/** The host part of a URL's authority (`h1:5432,h2`), and a function putting another one in its place. */
export function hostPart(url: string): { hosts: string; replace(hosts: string): string } | undefined {
  const m = AUTHORITY.exec(url)
  if (!m) return undefined
  const [, prefix, authority, rest] = m as unknown as [string, string, string, string]
  const at = authority.lastIndexOf('@')
  const userinfo = at >= 0 ? authority.slice(0, at + 1) : ''
  return { hosts: authority.slice(at + 1), replace: (hosts) => `${prefix}${userinfo}${hosts}${rest}` }
}

/** The URL with a comma-separated authority reduced to its first host, so `URL` can validate the rest. */
export function firstHostOnly(url: string): string {
  const part = hostPart(url)
  return part ? part.replace(part.hosts.split(',')[0]!) : url
}

/** pgjdbc's targetServerType as a libpq target_session_attrs value; unknown or read-only targets are refused. */
export function jdbcTarget(value: string, where: string, shown: string): TargetSessionAttrs {
  return JDBC_TARGETS[value] ?? invalid(where, shown, 'targetServerType any, primary or master (pgQueue writes: secondary targets cannot serve it)')
}

/** `h1:5432, h2` for logs. */
export function describeHosts(hosts: readonly ConnectionHost[]): string {
  return hosts.map((h) => (h.port === undefined ? h.host : `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}`)).join(', ')
}
