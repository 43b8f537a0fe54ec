// Confluent's /mode: READWRITE (default), READONLY or IMPORT, globally or per subject. READONLY refuses
// registration and deletes; IMPORT accepts only registrations that bring their own id (see import.ts), READWRITE
// only those that do not. Every refusal is 422, 42205, as in Confluent.
import type { Database } from '../db/database.js'
import { storeFor, type Store } from '../store/handle.js'
import { GLOBAL_SUBJECT } from '../store/registryConfig.js'
import type { RegistryMode } from '../store/registryMode.js'
import { invalidMode, modeNotFound, operationNotPermitted, readOnlyMode } from './errors.js'
import { enterImportMode } from './import.js'

const SUPPORTED: readonly RegistryMode[] = ['READWRITE', 'READONLY', 'IMPORT']

export function parseMode(value: unknown): RegistryMode {
  const upper = typeof value === 'string' ? value.toUpperCase() : value
  if (!SUPPORTED.includes(upper as RegistryMode)) throw invalidMode(upper)
  return upper as RegistryMode
}

/** The global mode, or a subject's own (40409 when unset unless `defaultToGlobal`). */
export async function readMode(store: Store, subject?: string, defaultToGlobal = false): Promise<RegistryMode> {
  if (subject !== undefined) {
    const own = await store.registryMode.getMode(subject)
    if (own) return own
    if (!defaultToGlobal) throw modeNotFound(subject)
  }
  return (await store.registryMode.getMode(GLOBAL_SUBJECT)) ?? 'READWRITE'
}

/** PUT /mode[/{s}][?force=true]: IMPORT needs an empty scope unless forced (see enterImportMode). */
export async function writeMode(db: Database, value: unknown, subject?: string, force = false): Promise<RegistryMode> {
  const mode = parseMode(value)
  if (mode === 'IMPORT') await enterImportMode(db, subject, force)
  else await storeFor(db).registryMode.setMode(subject ?? GLOBAL_SUBJECT, mode)
  return mode
}

/** Removes a subject's own mode (it falls back to the global one); returns the removed mode. */
export async function removeMode(store: Store, subject: string): Promise<RegistryMode> {
  const removed = await store.registryMode.deleteMode(subject)
  if (!removed) throw modeNotFound(subject)
  return removed
}

/** The mode that applies to a subject: its own, else the global one, else READWRITE. */
export async function modeInScope(store: Store, subject: string): Promise<RegistryMode> {
  return (await store.registryMode.effectiveMode(subject)) ?? 'READWRITE'
}

/** Throws 42205 when the subject (or, without its own mode, the registry) is READONLY. */
export async function assertWritable(store: Store, subject: string): Promise<void> {
  if ((await modeInScope(store, subject)) === 'READONLY') throw readOnlyMode(subject)
}

/** Confluent's rule for a registration: an explicit id needs IMPORT, no id needs READWRITE, READONLY takes neither. */
export async function assertRegistrable(store: Store, subject: string, withId: boolean): Promise<void> {
  const mode = await modeInScope(store, subject)
  if (mode === 'READONLY') throw readOnlyMode(subject)
  if (withId && mode !== 'IMPORT') throw operationNotPermitted(`Subject '${subject}' is not in import mode`)
  if (!withId && mode !== 'READWRITE') throw operationNotPermitted(`Subject '${subject}' is not in read-write mode`)
}
