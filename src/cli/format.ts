import type { Writable } from 'node:stream'

export type Cell = string | number | boolean | null | undefined

/** A plain-text table: headers upper-cased, columns padded, numbers right-aligned. */
export function table(headers: string[], rows: Cell[][]): string {
  const text = rows.map((r) => r.map((c) => (c === null || c === undefined ? '-' : String(c))))
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number' || r[i] === null || r[i] === undefined))
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((r) => r[i]!.length)))
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd()
  return `${[line(headers.map((h) => h.toUpperCase())), ...text.map(line)].join('\n')}\n`
}

/**
 * Counts and offsets the library keeps as decimal strings (KafkaJS's convention, exact beyond 2^53) under these
 * keys; --json prints them as numbers, as the HTTP API does, so every command's JSON has numbers for numbers
 * (docs/cli.md). Timestamps are epoch milliseconds everywhere, Dates included.
 */
const NUMERIC_KEYS = new Set([
  'offset',
  'low',
  'high',
  'lag',
  'totalLag',
  'maxLag',
  'aheadBy',
  'messages',
  'previousOffset',
  'newOffset',
  'committed',
  'timestamp',
  'id',
  'maxRowsPerTopic',
  'maxTotalPayloadBytes',
])
const INTEGER = /^-?\d+$/

/** A replacer (`this` is the holder: a Date has already become its ISO string in `v`). Dates print as epoch ms. */
function numbers(this: Record<string, unknown>, key: string, v: unknown): unknown {
  if (this[key] instanceof Date) return (this[key] as Date).getTime()
  return typeof v === 'bigint' ? Number(v) : typeof v === 'string' && NUMERIC_KEYS.has(key) && INTEGER.test(v) ? Number(v) : v
}

/** JSON text of a --json result (one line without `indent`, for JSON-lines output). */
export function toJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, numbers, indent)
}

export function writeJson(out: Writable, value: unknown): void {
  out.write(`${toJson(value, 2)}\n`)
}

/**
 * Progress on stderr for long operations: rewritten in place on a terminal, at most one line per interval
 * otherwise, so piped logs stay short.
 */
export function progress(err: Writable & { isTTY?: boolean }, intervalMs = 1000): { update(text: string): void; done(text?: string): void } {
  let last = 0
  let shown = false
  return {
    update(text) {
      const now = Date.now()
      if (now - last < intervalMs) return
      last = now
      shown = true
      err.write(err.isTTY ? `\r${text}\u001b[K` : `${text}\n`)
    },
    done(text) {
      if (shown && err.isTTY) err.write('\r\u001b[K')
      if (text) err.write(`${text}\n`)
    },
  }
}

/** Millisecond timestamps as ISO strings for tables. */
export const isoTime = (ms: number | null | undefined): string | null => (typeof ms === 'number' ? new Date(ms).toISOString() : null)

/**
 * An error as one `error:` line, followed by one line per inner error of an aggregate (admin.createTopics rejects
 * with one per topic, each naming its topic and reason).
 */
export function errorText(err: unknown): string {
  const e = err as { message?: string; errors?: unknown }
  let out = `error: ${e?.message ?? String(err)}\n`
  if (Array.isArray(e?.errors)) {
    for (const inner of e.errors as Array<{ topic?: string; type?: string; message?: string }>) {
      const reason = [inner?.type, inner?.message].filter(Boolean).join(': ')
      out += `  ${inner?.topic ? `${inner.topic}: ` : ''}${reason || String(inner)}\n`
    }
  }
  return out
}
