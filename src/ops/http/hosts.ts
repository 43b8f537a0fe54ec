// Which Host headers a server answers (against DNS rebinding: a page on evil.example whose name later resolves to
// 127.0.0.1 reaches a loopback server with `Host: evil.example`), and which listen addresses count as loopback.
import { isIP } from 'node:net'

/** 127.0.0.0/8, ::1 and `localhost` (also `*.localhost`, which browsers resolve to loopback themselves). */
export function isLoopbackHost(host: string): boolean {
  const h = bareHost(host)
  if (h === 'localhost' || h.endsWith('.localhost')) return true
  if (isIP(h) === 4) return h.startsWith('127.')
  return h === '::1' || h === '0:0:0:0:0:0:0:1'
}

/** Lower-cased, without brackets or a trailing dot. */
function bareHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
}

/** The host name of a Host header value (`name:port`, `[v6]:port`), or undefined when it is not one. */
export function hostOfHeader(header: string | undefined): string | undefined {
  if (!header || !URL.canParse(`http://${header}`)) return undefined
  const url = new URL(`http://${header}`)
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return undefined
  return bareHost(url.hostname)
}

/**
 * A Host header check. `allowed` lists extra names (exact, case-insensitive; `*` allows any); loopback names are
 * always allowed, and so is the address the server listens on when it is a specific one.
 */
export function hostAllowList(allowed: readonly string[] = [], listenHost?: string): (header: string | undefined) => boolean {
  if (allowed.includes('*')) return () => true
  const names = new Set([...allowed, ...(listenHost && !isWildcard(listenHost) ? [listenHost] : [])].map(bareHost))
  return (header) => {
    const host = hostOfHeader(header)
    return host !== undefined && (names.has(host) || isLoopbackHost(host))
  }
}

export const isWildcard = (host: string) => ['0.0.0.0', '::', '[::]', ''].includes(host.trim())
