// The console's browser files, bundled at build time (scripts/build-console.mjs) into dist/console/ui: read once,
// kept in memory with a gzip copy, served without credentials (they hold code, no data; every API call they make
// passes the gate) but only to an allowed Host. index.html gets the base path and a strict CSP.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { extname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { acceptsGzip } from '../ops/http/io.js'

export const ASSET_PREFIX = '/console/assets/'

interface Asset {
  body: Buffer
  gzip: Buffer
  type: string
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
}

// the page talks to its own origin only; inline script and style are refused, so injected markup cannot run
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** dist/console/ui next to the compiled module; from the sources (tests), the same folder of the build. */
export function consoleAssetsDir(): string | undefined {
  return [join(__dirname, 'ui'), join(__dirname, '..', '..', 'dist', 'console', 'ui')].find((d) => existsSync(join(d, 'index.html')))
}

export interface ConsoleAssets {
  /** answers GET/HEAD of `/` and of the bundle's files; false for any other path */
  serve(req: IncomingMessage, res: ServerResponse, path: string): boolean
}

/**
 * `bearer`: the server has a built-in token, so the page asks for it before its first call (with only
 * `authenticate`, e.g. a proxy's cookie, it asks when a call is refused).
 */
export function loadConsoleAssets(basePath: string, { bearer }: { bearer: boolean }, dir = consoleAssetsDir()): ConsoleAssets {
  const files = new Map<string, Asset>()
  const add = (name: string, body: Buffer) =>
    files.set(name, { body, gzip: gzipSync(body, { level: 9 }), type: TYPES[extname(name)] ?? 'application/octet-stream' })
  if (dir) {
    for (const name of readdirSync(dir)) {
      const body = readFileSync(join(dir, name))
      add(
        name,
        name === 'index.html'
          ? Buffer.from(
              body
                .toString('utf8')
                .replaceAll('%BASE%', basePath)
                .replace('%AUTH%', bearer ? 'bearer' : ''),
            )
          : body,
      )
    }
  } else {
    add('index.html', Buffer.from('<!doctype html><title>kafkajs-pgqueue</title><p>The console was not built: run npm run build.</p>'))
  }
  return {
    serve(req, res, path) {
      const name = path === '/' ? 'index.html' : path.startsWith(ASSET_PREFIX) ? path.slice(ASSET_PREFIX.length) : undefined
      const asset = name === undefined ? undefined : files.get(name)
      if (!asset || (req.method !== 'GET' && req.method !== 'HEAD')) return false
      const gzip = acceptsGzip(req)
      const body = gzip ? asset.gzip : asset.body
      res.writeHead(200, {
        'content-type': asset.type,
        'content-length': body.length,
        // bundle names carry a content hash; the page itself must always be fresh to name the current bundle
        'cache-control': name === 'index.html' ? 'no-store' : 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        ...(gzip ? { 'content-encoding': 'gzip' } : {}),
        vary: 'accept-encoding',
        ...(name === 'index.html' ? { 'content-security-policy': CSP } : {}),
      })
      res.end(req.method === 'HEAD' ? undefined : body)
      return true
    },
  }
}
