// Confluent's /mode: READWRITE (default), READONLY or IMPORT, globally or per subject. READONLY refuses
// registration and deletes; IMPORT accepts only registrations that bring their own id (see import.ts), READWRITE
// only those that do not. Every refusal is 422, 42205, as in Confluent.
import type { Database, Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { GLOBAL_SUBJECT } from '../store/registryConfig.js'
import { deleteMode, effectiveMode, getMode, setMode, type RegistryMode } from '../store/registryMode.js'
import { invalidMode, modeNotFound, operationNotPermitted, readOnlyMode } from './errors.js'
import { enterImportMode } from './import.js'

const SUPPORTED: readonly RegistryMode[] = ['READWRITE', 'READONLY', 'IMPORT']

export function parseMode(value: unknown): RegistryMode {
  const upper = typeof value === 'string' ? value.toUpperCase() : value
  if (!SUPPORTED.includes(upper as RegistryMode)) throw invalidMode(upper)
  return upper as RegistryMode
}

/** The global mode, or a subject's own (40409 when unset unless `defaultToGlobal`). */
export async function readMode(db: Queryable, t: Tables, subject?: string, defaultToGlobal = false): Promise<RegistryMode> {
  if (subject !== undefined) {
    const own = await getMode(db, t, subject)
    if (own) return own
    if (!defaultToGlobal) throw modeNotFound(subject)
  }
  return (await getMode(db, t, GLOBAL_SUBJECT)) ?? 'READWRITE'
}

/** PUT /mode[/{s}][?force=true]: IMPORT needs an empty scope unless forced (see enterImportMode). */
export async function writeMode(db: Database, t: Tables, value: unknown, subject?: string, force = false): Promise<RegistryMode> {
  const mode = parseMode(value)
  if (mode === 'IMPORT') await enterImportMode(db, t, subject, force)
  else await setMode(db.pool, t, subject ?? GLOBAL_SUBJECT, mode)
  return mode
}

/** Removes a subject's own mode (it falls back to the global one); returns the removed mode. */
export async function removeMode(db: Queryable, t: Tables, subject: string): Promise<RegistryMode> {
  const removed = await deleteMode(db, t, subject)
  if (!removed) throw modeNotFound(subject)
  return removed
}

/** The mode that applies to a subject: its own, else the global one, else READWRITE. */
export async function modeInScope(db: Queryable, t: Tables, subject: string): Promise<RegistryMode> {
  return (await effectiveMode(db, t, subject)) ?? 'READWRITE'
}

/** Throws 42205 when the subject (or, without its own mode, the registry) is READONLY. */
export async function assertWritable(db: Queryable, t: Tables, subject: string): Promise<void> {
  if ((await modeInScope(db, t, subject)) === 'READONLY') throw readOnlyMode(subject)
}

/** Confluent's rule for a registration: an explicit id needs IMPORT, no id needs READWRITE, READONLY takes neither. */
export async function assertRegistrable(db: Queryable, t: Tables, subject: string, withId: boolean): Promise<void> {
  const mode = await modeInScope(db, t, subject)
  if (mode === 'READONLY') throw readOnlyMode(subject)
  if (withId && mode !== 'IMPORT') throw operationNotPermitted(`Subject '${subject}' is not in import mode`)
  if (!withId && mode !== 'READWRITE') throw operationNotPermitted(`Subject '${subject}' is not in read-write mode`)
}
