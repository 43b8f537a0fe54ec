// ESM resolve hook (module.register): a bare `import 'kafkajs'` resolves to this package, as the CommonJS hook in
// index.ts does for require(). Runs on Node's loader thread; index.ts passes the paths in `initialize`.
import { fileURLToPath } from 'node:url'
import { shouldRedirect, type Redirect } from './redirect.js'

interface LoaderData extends Redirect {
  /** URL of the module that `kafkajs` imports resolve to. */
  target: string
}

let data: LoaderData | undefined

export function initialize(d: LoaderData): void {
  data = d
}

type NextResolve = (specifier: string, context: ResolveContext) => Promise<ResolveResult>
interface ResolveContext {
  parentURL?: string
  conditions: string[]
}
interface ResolveResult {
  url: string
  format?: string | null
  shortCircuit?: boolean
}

export async function resolve(specifier: string, context: ResolveContext, next: NextResolve): Promise<ResolveResult> {
  const parent = context.parentURL?.startsWith('file:') ? fileURLToPath(context.parentURL) : undefined
  if (data && shouldRedirect(specifier, parent, data)) return { url: data.target, shortCircuit: true }
  return next(specifier, context)
}
