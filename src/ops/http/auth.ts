// Built-in authentication for the HTTP servers: one bearer token (`Authorization: Bearer <token>`), compared in
// constant time. A token is what Prometheus (`authorization.credentials_file`), Kubernetes probes (httpHeaders) and
// curl (`-H`) all send without a helper; anything richer goes in `authenticate`.
import { createHash, timingSafeEqual } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { IncomingMessage } from 'node:http'

/** The environment variable `serve` reads the token from (or `--token-file`). */
export const OPS_TOKEN_ENV = 'DATAHUB_PGQUEUE_OPS_TOKEN'
/** Shorter tokens are refused: a token is the only thing between the network and an offset reset. */
export const MIN_TOKEN_LENGTH = 16

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest()

export function validateToken(token: string, where: string): string {
  const value = token.trim()
  if (value.length < MIN_TOKEN_LENGTH || /\s/.test(value)) {
    throw new TypeError(`${where}: the token must be at least ${MIN_TOKEN_LENGTH} characters without whitespace`)
  }
  return value
}

/** true when the request carries `Authorization: Bearer <token>` with this token. */
export function bearerAuthenticator(token: string): (req: IncomingMessage) => boolean {
  const expected = digest(validateToken(token, 'bearer token'))
  return (req) => {
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(req.headers.authorization ?? '')
    return m !== null && timingSafeEqual(digest(m[1]!), expected)
  }
}

/** The token from a file (its first line) or the environment; undefined when neither is set. */
export function readToken(file: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (file !== undefined) {
    const first = readFileSync(file, 'utf8').split(/\r?\n/)[0] ?? ''
    return validateToken(first, `token file ${file}`)
  }
  const fromEnv = env[OPS_TOKEN_ENV]
  return fromEnv === undefined || fromEnv === '' ? undefined : validateToken(fromEnv, OPS_TOKEN_ENV)
}
