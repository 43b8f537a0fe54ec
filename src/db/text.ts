/**
 * Whether PostgreSQL can store the string as text: it refuses NUL ("invalid byte sequence for encoding UTF8: 0x00"),
 * and node-postgres sends an unpaired surrogate as U+FFFD, so two different strings would be stored as one.
 */
export function isStorableText(s: string): boolean {
  return !s.includes('\0') && s.isWellFormed()
}
