// A connection string in an error or log line: its password never shows, not even in part, whatever characters it
// holds. Issue 39's leak: the masking and the host-list parser split `postgres://app:Pw@4,:98#@@db.example:badport/queue`
// differently, so the error quoted ":98" (part of the password) as a bad host entry. One parse now serves both.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { resolveConnection } from '../../../src/config/connection.js'
import { maskedConnectionString, parseConnectionString, quotable } from '../../../src/config/connectionString.js'
import { describeHosts } from '../../../src/config/hostList.js'
import type { PgQueueOptions } from '../../../src/config/types.js'
import { redactConnectionString } from '../../../src/db/connection.js'
import { runs } from '../../helpers/property.js'

/** Every line resolving this string can print: the error, or (when it resolves) the log lines about it. */
function linesFor(options: PgQueueOptions, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    const c = resolveConnection(options, env)
    return [redactConnectionString(c.connectionString ?? ''), c.hosts ? describeHosts(c.hosts) : '']
  } catch (err) {
    return [(err as Error).message]
  }
}

/** Where a password can go, and the rest of the string. */
const FORMS: Array<(pw: string) => { options: PgQueueOptions; env?: NodeJS.ProcessEnv }> = [
  (pw) => ({ options: {}, env: { DATABASE_URL: `postgres://app:${pw}@db.example:badport/queue` } }),
  (pw) => ({ options: {}, env: { DATABASE_URL: `postgres://app:${pw}@db.example:5432/queue` } }),
  (pw) => ({ options: {}, env: { DATABASE_URL: `postgresql://app:${pw}@h1:5432,h2:99999/queue?target_session_attrs=read-write` } }),
  (pw) => ({ options: { connectionString: `jdbc:postgresql://h1:5432,h2/db?user=app&password=${pw}&ssl=true` } }),
  (pw) => ({ options: {}, env: { DATAHUB_PGQUEUE_DATASOURCE_URL: `jdbc:postgresql://h1:bad/db?sslpassword=${pw}&sslkey=/k.pem` } }),
  (pw) => ({ options: { connectionString: `host=db.example password = ${pw} dbname=queue` } }),
  (pw) => ({ options: { connectionString: `postgres://h/db?password=${pw}`, connection: { connectionString: 'postgres://h/other' } } }),
  (pw) => ({ options: { connectionString: `mysql://app:${pw}@db.example/queue` } }),
]

/** 3-character windows of `secret` in `line` that the string without the secret does not explain. */
function leaks(line: string, secret: string, explained: string): string[] {
  const out: string[] = []
  for (let i = 0; i + 3 <= secret.length; i++) {
    const w = secret.slice(i, i + 3)
    if (line.includes(w) && !explained.includes(w) && !'***'.includes(w)) out.push(w)
  }
  return out
}

/** Every message's wording, so a window of the password that the wording happens to contain is no leak. */
const WORDING = ['postgres://a:b/@h/d', 'postgres://h,:1/d', 'postgres://h:0/d', 'postgres://h/d?target_session_attrs=standby', 'x']
  .map((url) => linesFor({ connectionString: url })[0])
  .join('\n')

function expectNoLeak(pw: string) {
  for (const form of FORMS) {
    const { options, env } = form(pw)
    // the string without the password, and each message's wording (a valid, an invalid and an ambiguous password)
    const explained =
      ['Pw', 'Pw,:x', 'Pw/@'].map((p) => JSON.stringify(form(p)) + linesFor(form(p).options, form(p).env).join('\n')).join('\n') + WORDING
    for (const line of linesFor(options, env)) expect(leaks(line, pw, explained), `${JSON.stringify(form(pw))} -> ${line}`).toEqual([])
  }
}

describe('secret masking', () => {
  it("issue 39's counterexample: no fragment of the password in the error", () => {
    const [message] = linesFor({}, { DATABASE_URL: 'postgres://app:Pw@4,:98#@@db.example:badport/queue' })
    expect(message).toContain('Invalid DATABASE_URL: "postgres://app:***@db.example:badport/queue"')
    expect(message).toMatch(/percent-encoded/)
    for (const fragment of [':98', '4,', 'Pw@', '98#']) expect(message).not.toContain(fragment)
  })

  it('a password with an unencoded @ is masked whole', () => {
    const [message] = linesFor({ connectionString: 'postgres://app:p@ss@word@db.example:notaport/queue' })
    expect(message).not.toMatch(/ss@word|word@|p@ss/)
    expect(message).toContain('postgres://app:***@db.example:notaport/queue')
    expect(maskedConnectionString('jdbc:postgresql://h1,h2/db?user=u&password=p&ss#x')).toBe('jdbc:postgresql://h1,h2/db?user=u&password=***')
  })

  // the family of the counterexample, each character at the start, middle and end, in every form above
  it.each([...'@,:/#?%', ' ', '\t'])('a password holding %j never shows, in any form', (c) => {
    for (const pw of [`QZ${c}XJ${c}KW`, `${c}QZXJ${c}`, `QZX${c}${c}4,:98${c}`, `Pw@4,:98#@`]) {
      expectNoLeak(pw)
      for (const form of FORMS) {
        const { options, env } = form(pw)
        for (const line of linesFor(options, env)) expect(line).not.toMatch(/QZ|XJ|KW/)
      }
    }
  })

  it('a host quoted in an error is one that cannot be part of the password', () => {
    expect(linesFor({ connectionString: 'postgres://u:secret@h1,h2:99999/d' })[0]).toMatch(/65535 \(bad entry "h2:99999"\)/)
    expect(linesFor({ connectionString: 'postgres://u:s,c@:5/d' })[0]).toMatch(/\*\*\*@:5.*bad entry ":5"/)
    // a part touching a span the parse marks secret is never quoted (a message names it by position instead)
    const parts = parseConnectionString('postgres://u:sec@h/d')
    expect(quotable(parts, { start: 13, end: 16 })).toBeUndefined()
    expect(quotable(parts, { start: 17, end: 18 })).toBe('h')
  })

  it('a log line of a string whose password holds an unencoded @ is the masked string, not what URL makes of it', () => {
    expect(redactConnectionString('postgres://app:Pw@4#@db.example:5432/queue')).toBe('postgres://app:***@db.example:5432/queue')
  })

  it('a password option of the wrong type is named by its type, not shown', () => {
    expect(() => resolveConnection({ connection: { password: 918273645 as unknown as string } }, {})).toThrow(/<a number>/)
    expect(() => resolveConnection({ connection: { password: 918273645 as unknown as string } }, {})).not.toThrow(/918273645/)
  })

  it('property: no part of any password shows, in any form, error or log line', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...'@/&#?:=!%$;,+ \tXYZqwk0123456789'), { minLength: 4, maxLength: 24 }).map((cs) => `Pw${cs.join('')}`),
        expectNoLeak,
      ),
      { numRuns: runs(300) },
    )
  })
})
