import path from 'node:path'

/**
 * Which `kafkajs` a module gets while the register hook is installed: this package's entry, except for this
 * package's own code (it builds on the real kafkajs) and for kafkajs itself.
 */
export interface Redirect {
  /** Directory holding this package's code (dist/ when installed, src/ in this repository). */
  ownDir: string
  /** The real kafkajs package's directory. */
  kafkajsDir: string
}

/** True when `request` from `parentFile` is a bare `kafkajs` that should resolve to this package. */
export function shouldRedirect(request: string, parentFile: string | undefined, r: Redirect): boolean {
  if (request !== 'kafkajs') return false
  if (parentFile === undefined) return true
  return !isInside(parentFile, r.ownDir) && !isInside(parentFile, r.kafkajsDir)
}

function isInside(file: string, dir: string): boolean {
  const rel = path.relative(dir, file)
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)
}
