// Strict value parsers shared by environment variables (strings) and constructor options (typed values).
// Every failure is a KafkaJSNonRetriableError naming where the value came from, the value, and what is allowed,
// so a misconfigured deployment fails at startup instead of misbehaving later.
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'

/** Parses a raw value (env string or option value) read from `where` (a variable name or option path). */
export type Parser<T> = (raw: unknown, where: string) => T

/** Renders a bad value for an error message: strings quoted, NaN and friends readable. */
export function formatValue(raw: unknown): string {
  if (typeof raw === 'string') return JSON.stringify(raw)
  if (typeof raw === 'number' || typeof raw === 'bigint' || typeof raw === 'boolean' || raw === undefined) return String(raw)
  try {
    return JSON.stringify(raw) ?? String(raw)
  } catch {
    return String(raw)
  }
}

export function invalid(where: string, raw: unknown, expected: string): never {
  throw new KafkaJSNonRetriableError(`Invalid ${where}: ${formatValue(raw)}; expected ${expected}`)
}

/** A trimmed variable, with '' counted as unset: connection variables are often templated to empty, and pg does the same. */
export function readEnvNonEmpty(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}

const INTEGER = /^[+-]?\d+$/

export interface IntRange {
  min: number
  max?: number
  /** extra text for the error, e.g. "or 0 to disable" */
  note?: string
}

function describeRange({ min, max, note }: IntRange): string {
  const span = max === undefined ? `an integer >= ${min}` : `an integer from ${min} to ${max}`
  return note ? `${span} (${note})` : span
}

/** Integers only: rejects '', '12abc', '1.5', '1e3', NaN, Infinity, unsafe integers, and values out of range. */
export function int(range: IntRange): Parser<number> {
  return (raw, where) => {
    let value: number
    if (typeof raw === 'number') value = raw
    else if (typeof raw === 'string' && INTEGER.test(raw.trim())) value = Number(raw.trim())
    else return invalid(where, raw, describeRange(range))
    if (!Number.isSafeInteger(value) || value < range.min || (range.max !== undefined && value > range.max)) {
      return invalid(where, raw, describeRange(range))
    }
    return value
  }
}

const TRUE = new Set(['true', '1', 'yes'])
const FALSE = new Set(['false', '0', 'no'])

/** true/false/1/0/yes/no, case-insensitive; options may also pass a real boolean. */
export const bool: Parser<boolean> = (raw, where) => {
  if (typeof raw === 'boolean') return raw
  if (typeof raw === 'string') {
    const word = raw.trim().toLowerCase()
    if (TRUE.has(word)) return true
    if (FALSE.has(word)) return false
  }
  return invalid(where, raw, 'one of true, false, 1, 0, yes, no')
}

/** One of a fixed list, compared after trimming and case-folding; returns the canonical spelling. */
export function oneOf<T extends string>(allowed: readonly T[]): Parser<T> {
  return (raw, where) => {
    if (typeof raw === 'string') {
      const folded = raw.trim().replace(/\s+/g, ' ').toLowerCase()
      const hit = allowed.find((candidate) => candidate.toLowerCase() === folded)
      if (hit !== undefined) return hit
    }
    return invalid(where, raw, `one of ${allowed.join(', ')}`)
  }
}

/** A non-blank string, trimmed. */
export const nonEmptyString: Parser<string> = (raw, where) => {
  if (typeof raw === 'string' && raw.trim() !== '') return raw.trim()
  return invalid(where, raw, 'a non-empty string')
}

const MIME = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(\s*;.*)?$/i

/** type/subtype with optional parameters; stored in the content-type catalogue, so reject junk early. */
export const mimeType: Parser<string> = (raw, where) => {
  if (typeof raw === 'string' && MIME.test(raw.trim()) && raw.trim().length <= 255) return raw.trim()
  return invalid(where, raw, 'a MIME type such as application/avro (type/subtype, at most 255 characters)')
}

/** Applies `parse` after mapping a value, e.g. env seconds to config milliseconds. */
export function scaled(parse: Parser<number>, factor: number): Parser<number> {
  return (raw, where) => parse(raw, where) * factor
}
