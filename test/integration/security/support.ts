// Raw HTTP for the security tests: node:http, so Host, Origin and Content-Type are exactly what the test says
// (fetch would fill in or refuse some of them).
import { request } from 'node:http'

export interface RawReply {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
  json: any
}

export function raw(
  url: string,
  method: string,
  { headers = {}, body }: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawReply> {
  const u = new URL(url)
  // a body goes with its length, whatever the method (a GET body without one would be parsed as the next request)
  if (body !== undefined) headers = { 'content-length': String(Buffer.byteLength(body)), ...headers }
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: u.port, method, path: `${u.pathname}${u.search}`, headers, timeout: 20_000 },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let json: unknown
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
        })
        res.on('error', reject)
      },
    )
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} timed out`)))
    req.on('error', reject)
    req.end(body)
  })
}

/** A JSON request as a well-behaved client sends it. */
export const jsonRequest = (url: string, method: string, body?: unknown, headers: Record<string, string> = {}) =>
  raw(url, method, {
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
