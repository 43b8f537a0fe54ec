// Compatibility configuration: GET|PUT /config and GET|PUT|DELETE /config/{subject}.
import type { Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { GLOBAL_SUBJECT, deleteCompatibility, getCompatibility, setCompatibility } from '../store/registryConfig.js'
import { listSubjects } from '../store/registryVersions.js'
import { parseCompatibilityLevel } from './compatibility.js'
import { subjectLevelCompatibilityNotConfigured, subjectNotFound } from './errors.js'
import { DEFAULT_COMPATIBILITY, type CompatibilityLevel } from '../store/registryTypes.js'

export async function globalCompatibility(db: Queryable, t: Tables): Promise<CompatibilityLevel> {
  return (await getCompatibility(db, t, GLOBAL_SUBJECT)) ?? DEFAULT_COMPATIBILITY
}

export async function setGlobalCompatibility(db: Queryable, t: Tables, level: unknown): Promise<CompatibilityLevel> {
  const parsed = parseCompatibilityLevel(level)
  await setCompatibility(db, t, GLOBAL_SUBJECT, parsed)
  return parsed
}

/** The subject's own level; 40408 when it has none, unless `defaultToGlobal`. */
export async function subjectCompatibility(db: Queryable, t: Tables, subject: string, defaultToGlobal: boolean): Promise<CompatibilityLevel> {
  const own = await getCompatibility(db, t, subject)
  if (own) return own
  if (defaultToGlobal) return globalCompatibility(db, t)
  throw subjectLevelCompatibilityNotConfigured(subject)
}

/** A subject's level may be set before its first version (clients do that on first registration). */
export async function setSubjectCompatibility(db: Queryable, t: Tables, subject: string, level: unknown): Promise<CompatibilityLevel> {
  const parsed = parseCompatibilityLevel(level)
  await setCompatibility(db, t, subject, parsed)
  return parsed
}

/** Reverts a subject to the global level; returns the level it had. */
export async function deleteSubjectCompatibility(db: Queryable, t: Tables, subject: string): Promise<CompatibilityLevel> {
  const removed = await deleteCompatibility(db, t, subject)
  if (removed) return removed
  const exists = (await listSubjects(db, t, true, subject)).includes(subject)
  throw exists ? subjectLevelCompatibilityNotConfigured(subject) : subjectNotFound(subject)
}
