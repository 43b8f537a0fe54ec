// Confluent's /mode: READWRITE (default) or READONLY, globally or per subject. A READONLY subject refuses
// registration and deletes (422, 42205). IMPORT (registration with given ids) is refused as not supported.
import type { Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { GLOBAL_SUBJECT } from '../store/registryConfig.js'
import { deleteMode, effectiveMode, getMode, setMode, type RegistryMode } from '../store/registryMode.js'
import { invalidMode, modeNotFound, readOnlyMode } from './errors.js'

const SUPPORTED: readonly RegistryMode[] = ['READWRITE', 'READONLY']

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

export async function writeMode(db: Queryable, t: Tables, value: unknown, subject?: string): Promise<RegistryMode> {
  const mode = parseMode(value)
  await setMode(db, t, subject ?? GLOBAL_SUBJECT, mode)
  return mode
}

/** Removes a subject's own mode (it falls back to the global one); returns the removed mode. */
export async function removeMode(db: Queryable, t: Tables, subject: string): Promise<RegistryMode> {
  const removed = await deleteMode(db, t, subject)
  if (!removed) throw modeNotFound(subject)
  return removed
}

/** Throws 42205 when the subject (or, without its own mode, the registry) is READONLY. */
export async function assertWritable(db: Queryable, t: Tables, subject: string): Promise<void> {
  if ((await effectiveMode(db, t, subject)) === 'READONLY') throw readOnlyMode(subject)
}
