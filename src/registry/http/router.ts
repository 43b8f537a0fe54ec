// A minimal method + path router: patterns like /subjects/:subject/versions/:version, matched on raw path
// segments that are decoded only after splitting, so a subject may contain an encoded slash (%2F).

export interface RouteRequest {
  params: Record<string, string>
  query: URLSearchParams
  /** the parsed JSON body (undefined when empty) */
  body(): Promise<unknown>
}

/** A JSON value to send, or `raw` text sent as is (the /schema endpoints return the schema itself). */
export type Reply = { status?: number; json: unknown } | { status?: number; raw: string }

export type RouteHandler = (req: RouteRequest) => Promise<Reply>

interface Route {
  method: string
  segments: string[]
  handler: RouteHandler
}

export type RouteMatch =
  { kind: 'found'; handler: RouteHandler; params: Record<string, string> } | { kind: 'method-not-allowed' } | { kind: 'not-found' }

export class Router {
  private readonly routes: Route[] = []

  on(method: string, pattern: string, handler: RouteHandler): this {
    this.routes.push({ method, segments: split(pattern), handler })
    return this
  }

  match(method: string, path: string): RouteMatch {
    const segments = split(path)
    let pathMatched = false
    for (const route of this.routes) {
      const params = matchSegments(route.segments, segments)
      if (!params) continue
      pathMatched = true
      if (route.method === method) return { kind: 'found', handler: route.handler, params }
    }
    return { kind: pathMatched ? 'method-not-allowed' : 'not-found' }
  }
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s !== '')
}

function matchSegments(pattern: string[], actual: string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!
    let value: string
    try {
      value = decodeURIComponent(actual[i]!)
    } catch {
      return undefined // malformed escape: no route matches
    }
    if (p.startsWith(':')) params[p.slice(1)] = value
    else if (p !== value) return undefined
  }
  return params
}
