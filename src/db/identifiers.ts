/** Double-quotes an identifier that was validated; quotes inside are doubled for safety anyway. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}
