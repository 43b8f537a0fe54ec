// DataHub's pgQueue header column: a JSON array `[{"key":"<k>","v":"<base64>"}]` in producer order,
// SQL NULL when empty. Shared with Java/Python DataHub readers, so both directions follow their rules.
import type { HeaderPair } from './messageValidation.js'

export type { HeaderPair }
/** What a KafkaJS consumer sees: always Buffers; a repeated key becomes an array in order. */
export type ConsumedHeaders = { [key: string]: Buffer | Buffer[] }

interface HeaderEntry {
  key: string
  v: string
}

/** JSON text for the `headers` jsonb column, or null for no headers. */
export function encodeHeaders(pairs: ReadonlyArray<readonly [string, Uint8Array]>): string | null {
  if (pairs.length === 0) return null
  const entries: HeaderEntry[] = pairs.map(([key, value]) => ({
    key,
    v: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64'),
  }))
  return JSON.stringify(entries)
}

/**
 * Pairs from the column value: pg hands jsonb over already parsed, text is parsed here. Like DataHub's
 * readers, anything that is not an array means no headers, and a missing key or value reads as "".
 */
export function decodeHeaderPairs(column: unknown): HeaderPair[] {
  let parsed = column
  if (typeof column === 'string') {
    try {
      parsed = JSON.parse(column)
    } catch {
      return []
    }
  }
  if (!Array.isArray(parsed)) return []
  const pairs: HeaderPair[] = []
  for (const entry of parsed) {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) continue
    const { key, v } = entry as { key?: unknown; v?: unknown }
    pairs.push([typeof key === 'string' ? key : '', Buffer.from(typeof v === 'string' ? v : '', 'base64')])
  }
  return pairs
}

/** KafkaJS consumer headers from the column value. */
export function decodeHeaders(column: unknown): ConsumedHeaders {
  return pairsToKafkaHeaders(decodeHeaderPairs(column))
}

export function pairsToKafkaHeaders(pairs: ReadonlyArray<HeaderPair>): ConsumedHeaders {
  const out: ConsumedHeaders = {}
  for (const [key, value] of pairs) {
    const existing = Object.hasOwn(out, key) ? out[key] : undefined
    if (Array.isArray(existing)) {
      existing.push(value)
      continue
    }
    const next = existing === undefined ? value : [existing, value]
    // defineProperty: a header named "__proto__" must become a property, not a prototype change.
    Object.defineProperty(out, key, { value: next, enumerable: true, writable: true, configurable: true })
  }
  return out
}
