/**
 * PostgreSQL array literals for a statement's array parameters, built in one pass. node-postgres builds the same
 * text, but quotes and regex-escapes every element, numbers included (two replace() calls per element): for a
 * 1,000-row send with nine array columns that was a sixth of the producer's CPU (docs/performance.md).
 */

/** Integers (or null) as `{1,2,NULL}`. */
export function integerArray(values: ReadonlyArray<number | null>): string {
  let out = '{'
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (i > 0) out += ','
    out += v === null ? 'NULL' : String(v)
  }
  return out + '}'
}

const NEEDS_ESCAPE = /["\\]/

/** Strings (or null), each double-quoted; only a string holding a quote or a backslash is escaped. */
export function textArray(values: ReadonlyArray<string | null>): string {
  let out = '{'
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (i > 0) out += ','
    if (v === null) out += 'NULL'
    else out += `"${NEEDS_ESCAPE.test(v) ? v.replace(/[\\"]/g, '\\$&') : v}"`
  }
  return out + '}'
}

/** Byte strings (or null) in bytea's hex form, `{"\\x0a0b",NULL}`. */
export function byteaArray(values: ReadonlyArray<Buffer | null>): string {
  let out = '{'
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (i > 0) out += ','
    out += v === null ? 'NULL' : `"\\\\x${v.toString('hex')}"`
  }
  return out + '}'
}
