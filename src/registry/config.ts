// Compatibility configuration: GET|PUT /config and GET|PUT|DELETE /config/{subject}.
import type { Store } from '../store/handle.js'
import { GLOBAL_SUBJECT } from '../store/registryConfig.js'
import { parseCompatibilityLevel } from './compatibility.js'
import { subjectLevelCompatibilityNotConfigured, subjectNotFound } from './errors.js'
import { DEFAULT_COMPATIBILITY, type CompatibilityLevel } from '../store/registryTypes.js'

export async function globalCompatibility(store: Store): Promise<CompatibilityLevel> {
  return (await store.registryConfig.getCompatibility(GLOBAL_SUBJECT)) ?? DEFAULT_COMPATIBILITY
}

export async function setGlobalCompatibility(store: Store, level: unknown): Promise<CompatibilityLevel> {
  const parsed = parseCompatibilityLevel(level)
  await store.registryConfig.setCompatibility(GLOBAL_SUBJECT, parsed)
  return parsed
}

/** The subject's own level; 40408 when it has none, unless `defaultToGlobal`. */
export async function subjectCompatibility(store: Store, subject: string, defaultToGlobal: boolean): Promise<CompatibilityLevel> {
  const own = await store.registryConfig.getCompatibility(subject)
  if (own) return own
  if (defaultToGlobal) return globalCompatibility(store)
  throw subjectLevelCompatibilityNotConfigured(subject)
}

/** A subject's level may be set before its first version (clients do that on first registration). */
export async function setSubjectCompatibility(store: Store, subject: string, level: unknown): Promise<CompatibilityLevel> {
  const parsed = parseCompatibilityLevel(level)
  await store.registryConfig.setCompatibility(subject, parsed)
  return parsed
}

/** Reverts a subject to the global level; returns the level it had. */
export async function deleteSubjectCompatibility(store: Store, subject: string): Promise<CompatibilityLevel> {
  const removed = await store.registryConfig.deleteCompatibility(subject)
  if (removed) return removed
  const exists = (await store.registryVersions.listSubjects(true, subject)).includes(subject)
  throw exists ? subjectLevelCompatibilityNotConfigured(subject) : subjectNotFound(subject)
}
