// A connection URL in an error message: its password never shows, not even in part, whatever characters it holds
// (an unencoded `@` used to leave the part after it visible).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { maskedUrl, resolveConnection } from '../../../src/config/connection.js'

const PASSWORD_CHARS = [...'@/&#?:=!%$;,+ XYZqwk0123456789']

/** The error resolveConnection throws for this URL; undefined when it parses (an unencoded `/` can make it valid). */
function errorFor(url: string): string | undefined {
  try {
    resolveConnection({ connectionString: url }, {})
  } catch (err) {
    return (err as Error).message
  }
  return undefined
}

/** 3-character windows of `secret` in the message that neither the rest of the URL nor the message's wording explain */
const leaks = (message: string, secret: string, url: string) => {
  const rest = url.split(secret).join('') + (errorFor(url.split(secret).join('Pw')) ?? '')
  const out: string[] = []
  for (let i = 0; i + 3 <= secret.length; i++) {
    const w = secret.slice(i, i + 3)
    if (message.includes(w) && !rest.includes(w) && !'***'.includes(w)) out.push(w)
  }
  return out
}

describe('secret masking', () => {
  it('a password with an unencoded @ is masked whole (item 9)', () => {
    const message = errorFor('postgres://app:p@ss@word@db.example:notaport/queue')!
    console.log(`mask: ${message}`)
    expect(message).not.toMatch(/ss@word|word@|p@ss/)
    expect(message).toContain('postgres://app:***@db.example:notaport/queue')
    expect(maskedUrl('jdbc:postgresql://h1,h2/db?user=u&password=p&ss#x')).toBe('jdbc:postgresql://h1,h2/db?user=u&password=***')
  })

  it('no part of any password shows, in userinfo or in password=', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...PASSWORD_CHARS), { minLength: 4, maxLength: 24 }).map((cs) => `Pw${cs.join('')}`),
        (pw) => {
          for (const url of [`postgres://app:${pw}@db.example:badport/queue`, `jdbc:postgresql://h1:5432,h2/db?user=app&password=${pw}&ssl=true`]) {
            const message = errorFor(url)
            if (message !== undefined) expect(leaks(message, pw, url), `${url} -> ${message}`).toEqual([])
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})
