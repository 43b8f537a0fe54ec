// Compatibility between a new schema and the versions already in a subject, decided by Avro schema resolution:
// avsc's `reader.createResolver(writer)` throws when data written with `writer` cannot be read as `reader`. Named
// types match by unqualified name (or alias), as in Avro >= 1.10's SchemaCompatibility that Confluent runs: a
// namespace-only change is compatible.
import type { Type } from 'avsc'
import { COMPATIBILITY_LEVELS, type CompatibilityLevel } from '../store/registryTypes.js'
import { invalidCompatibilityLevel } from './errors.js'

export interface VersionedType {
  version: number
  type: Type
}

export function parseCompatibilityLevel(value: unknown): CompatibilityLevel {
  const upper = typeof value === 'string' ? value.toUpperCase() : value
  if (!COMPATIBILITY_LEVELS.includes(upper as CompatibilityLevel)) throw invalidCompatibilityLevel(value)
  return upper as CompatibilityLevel
}

/** Empty when `reader` can read everything `writer` wrote, else the resolver's complaint. */
function resolutionError(reader: Type, writer: Type): string | undefined {
  try {
    reader.createResolver(writer, { ignoreNamespaces: true })
    return undefined
  } catch (err) {
    return (err as Error).message
  }
}

/**
 * Reasons `candidate` may not join a subject whose live versions are `existing` (oldest first); [] = compatible.
 * Plain levels compare with the latest version only, *_TRANSITIVE ones with every version.
 */
export function compatibilityProblems(level: CompatibilityLevel, candidate: Type, existing: readonly VersionedType[]): string[] {
  if (level === 'NONE' || existing.length === 0) return []
  const targets = level.endsWith('_TRANSITIVE') ? existing : existing.slice(-1)
  const backward = level.startsWith('BACKWARD') || level.startsWith('FULL')
  const forward = level.startsWith('FORWARD') || level.startsWith('FULL')
  const problems: string[] = []
  for (const { version, type } of targets) {
    const back = backward ? resolutionError(candidate, type) : undefined
    if (back) problems.push(`BACKWARD: the new schema cannot read data written with version ${version}: ${back}`)
    const fwd = forward ? resolutionError(type, candidate) : undefined
    if (fwd) problems.push(`FORWARD: version ${version} cannot read data written with the new schema: ${fwd}`)
  }
  return problems
}
