// The one check every request passes before any route (ops, the mounted schema registry, later the console) sees it:
//   1. Host header on the allow-list (DNS rebinding),
//   2. credentials, when the server has any (built-in bearer token or `authenticate`),
//   3. for requests that change state: no cross-site Origin / Sec-Fetch-Site (CSRF), a JSON media type for a body
//      (an HTML form or a no-cors fetch can only send text/plain, form types or none), then `authorize`.
import type { IncomingMessage } from 'node:http'
import { bearerAuthenticator } from './auth.js'
import { hostAllowList, isLoopbackHost } from './hosts.js'

export type RequestCheck = (req: IncomingMessage) => boolean | Promise<boolean>

export interface RequestGateOptions {
  /** require `Authorization: Bearer <token>` on every request */
  token?: string
  /** your own authentication, asked for every request (after the token, when both are given); false answers 401 */
  authenticate?: RequestCheck
  /** asked before every request that changes state (anything but GET, HEAD, OPTIONS); false answers 403 */
  authorize?: RequestCheck
  /** Host names answered besides the loopback ones (and the listen address); `['*']` turns the check off */
  allowedHosts?: readonly string[]
  /** origins (e.g. `https://console.example`) allowed to send state-changing requests besides the server's own */
  allowedOrigins?: readonly string[]
  /** the address the server listens on (added to the allowed hosts when it is a specific one) */
  listenHost?: string
}

export interface Rejection {
  status: number
  message: string
  headers?: Record<string, string>
}

/** Media types a state-changing request body may have (the parameters after `;` are ignored). */
export type BodyTypes = ReadonlySet<string>
export const JSON_BODY_TYPES: BodyTypes = new Set(['application/json'])

export type RequestGate = (req: IncomingMessage, bodyTypes: BodyTypes) => Promise<Rejection | undefined>

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

const hasCredentials = (o: RequestGateOptions) => o.token !== undefined || o.authenticate !== undefined

/** Throws (TypeError) when `host` is not a loopback address and the options carry no credentials. */
export function requireCredentials(host: string, options: Pick<RequestGateOptions, 'token' | 'authenticate'>, what: string): void {
  if (isLoopbackHost(host) || hasCredentials(options)) return
  throw new TypeError(
    `Refusing to serve ${what} on ${host} without authentication: give a token (serve: DATAHUB_PGQUEUE_OPS_TOKEN ` +
      'or --token-file) or an `authenticate` function, or listen on a loopback address',
  )
}

export function createRequestGate(options: RequestGateOptions = {}): RequestGate {
  const hostAllowed = hostAllowList(options.allowedHosts, options.listenHost)
  const bearer = options.token !== undefined ? bearerAuthenticator(options.token) : undefined
  const origins = new Set((options.allowedOrigins ?? []).map((o) => o.replace(/\/+$/, '').toLowerCase()))

  return async (req, bodyTypes) => {
    const host = req.headers.host
    if (!hostAllowed(host)) {
      return { status: 403, message: `Host ${JSON.stringify(host ?? '')} is not allowed: add it to allowedHosts (serve --allowed-hosts)` }
    }
    if ((bearer && !bearer(req)) || (options.authenticate && !(await options.authenticate(req)))) {
      return { status: 401, message: 'Unauthorized: send Authorization: Bearer <token>', headers: { 'www-authenticate': 'Bearer' } }
    }
    if (SAFE_METHODS.has(req.method ?? 'GET')) return undefined
    const origin = req.headers.origin
    if (origin !== undefined && !sameOrigin(origin, host) && !origins.has(origin.toLowerCase())) {
      return { status: 403, message: `Cross-origin request refused (Origin ${JSON.stringify(origin)})` }
    }
    const site = req.headers['sec-fetch-site']
    if (origin === undefined && (site === 'cross-site' || site === 'same-site')) return { status: 403, message: 'Cross-site request refused' }
    if (hasBody(req) || req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH') {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
      if (!bodyTypes.has(type)) {
        return { status: 415, message: `Unsupported Media Type ${JSON.stringify(type)}: send ${[...bodyTypes].join(' or ')}` }
      }
    }
    if (options.authorize && !(await options.authorize(req))) return { status: 403, message: 'Forbidden' }
    return undefined
  }
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  if (!URL.canParse(origin)) return false
  const url = new URL(origin)
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.host === (host ?? '').toLowerCase()
}

const hasBody = (req: IncomingMessage) =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0')
