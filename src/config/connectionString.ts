// One reading of a connection string, used both to connect and to describe it. A password may hold unencoded `@`,
// `/`, `?`, `#`, `,`, `:`, `%` or whitespace; then where the userinfo ends is a guess, and two parsers guessing
// differently once let an error quote a password's tail as a "host". Here one parse marks every span that may hold a
// secret (conservatively: to the LAST `@` that is not inside a known non-secret parameter, and from any `password=`
// to the end), and messages show the value with those spans masked and quote a part only when it lies outside them.

export interface Span {
  start: number
  end: number
}

export interface HostEntry extends Span {
  text: string
}

export interface QueryParam {
  key: string
  value: string
}

export interface ConnectionStringParts {
  /** the value, trimmed */
  readonly value: string
  /** `postgres://`, `postgresql://`, `jdbc:postgresql://` or `jdbc:postgresql:` (no authority: localhost); undefined when it is none of these */
  readonly scheme?: string
  /** `user:password@` as written, or '' */
  readonly userinfo: string
  /** the comma-separated host list as written, each entry with its place in `value` */
  readonly hosts: HostEntry[]
  /** path, query and fragment as written */
  readonly rest: string
  readonly params: QueryParam[]
  /**
   * an `@` past the host part that no known parameter explains: the password holds an unencoded `@`, `/`, `?` or `#`
   * and nobody can say where it ends, so the string is refused rather than read one way and shown another
   */
  readonly ambiguous: boolean
  /** spans of `value` that may hold a secret, sorted and disjoint */
  readonly secrets: Span[]
}

const SCHEME = /^(?:postgres(?:ql)?:\/\/|jdbc:postgresql:(?:\/\/)?)/i
/** parameters whose values may hold an `@` without it being a password's: Azure's user@server, free-text names */
const AT_ALLOWED = new Set(['user', 'application_name', 'applicationname', 'options'])
/** libpq's `password=` / `sslpassword=` (keyword strings allow spaces around `=`), in a URL query or a keyword string */
const PASSWORD_KEY = /password\s*=/i

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '))
  } catch {
    return s
  }
}

function mergeSpans(spans: Span[]): Span[] {
  const sorted = spans.filter((s) => s.end >= s.start).sort((a, b) => a.start - b.start)
  const out: Span[] = []
  for (const s of sorted) {
    const last = out[out.length - 1]
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end)
    else out.push({ ...s })
  }
  return out
}

/** Everything from a `password=` to the end: a password holding `&`, `#` or spaces leaves no trustworthy end. */
function keywordSecret(value: string): Span | undefined {
  const m = PASSWORD_KEY.exec(value)
  return m ? { start: m.index + m[0].length, end: value.length } : undefined
}

export function parseConnectionString(raw: string): ConnectionStringParts {
  const value = raw.trim()
  const scheme = SCHEME.exec(value)?.[0]
  const keyword = keywordSecret(value)
  if (scheme === undefined) {
    // not a URL we read: mask any `password=` value and a password as far as the last `@` (`mysql://u:secret@h`)
    const at = value.lastIndexOf('@')
    const slashes = value.indexOf('//')
    const from = slashes >= 0 && slashes < at ? slashes + 2 : 0
    const colon = value.indexOf(':', from)
    const userinfo = colon >= 0 && colon < at ? [{ start: colon + 1, end: at }] : []
    const secrets = mergeSpans([...(keyword ? [keyword] : []), ...userinfo])
    return { value, userinfo: '', hosts: [], rest: value, params: [], ambiguous: false, secrets }
  }
  const b = scheme.length
  const noAuthority = !scheme.endsWith('//')
  const authEnd = noAuthority ? b : b + (/[/?#]|$/.exec(value.slice(b))?.index ?? 0)
  const hash = value.indexOf('#', authEnd)
  const queryStart = value.indexOf('?', authEnd)
  const queryEnd = hash >= 0 ? hash : value.length
  const params: QueryParam[] = []
  const allowedAt: Span[] = []
  if (queryStart >= 0 && queryStart < queryEnd) {
    let pos = queryStart + 1
    for (const piece of value.slice(queryStart + 1, queryEnd).split('&')) {
      const eq = piece.indexOf('=')
      const key = safeDecode(eq >= 0 ? piece.slice(0, eq) : piece)
      if (eq >= 0) {
        params.push({ key, value: safeDecode(piece.slice(eq + 1)) })
        if (AT_ALLOWED.has(key.toLowerCase()) || /password$/i.test(key)) allowedAt.push({ start: pos + eq + 1, end: pos + piece.length })
      }
      pos += piece.length + 1
    }
  }
  // the `@` that ends the userinfo: the last one past the host part that no parameter explains, else the authority's last
  let userEnd = -1
  let ambiguous = false
  for (let i = value.indexOf('@', authEnd); i >= 0; i = value.indexOf('@', i + 1)) {
    if (!allowedAt.some((s) => i >= s.start && i < s.end)) {
      userEnd = i
      ambiguous = true
    }
  }
  if (!ambiguous) userEnd = authEnd > b ? value.lastIndexOf('@', authEnd - 1) : -1
  if (userEnd < b) userEnd = -1
  const secrets: Span[] = keyword ? [keyword] : []
  if (userEnd >= 0) {
    const colon = value.indexOf(':', b)
    if (colon >= 0 && colon < userEnd) secrets.push({ start: colon + 1, end: userEnd })
  }
  const hostsStart = userEnd >= 0 && userEnd < authEnd ? userEnd + 1 : b
  const hosts: HostEntry[] = []
  if (!noAuthority && !ambiguous) {
    let pos = hostsStart
    for (const text of value.slice(hostsStart, Math.max(hostsStart, authEnd)).split(',')) {
      hosts.push({ text, start: pos, end: pos + text.length })
      pos += text.length + 1
    }
  }
  return {
    value,
    scheme,
    userinfo: userEnd >= 0 && userEnd < authEnd ? value.slice(b, userEnd + 1) : '',
    hosts,
    rest: value.slice(Math.max(authEnd, hostsStart)),
    params,
    ambiguous,
    secrets: mergeSpans(secrets),
  }
}

/** The value as any message may show it: every span that may hold a secret replaced by `***`. */
export function shownValue(parts: ConnectionStringParts): string {
  let out = ''
  let pos = 0
  for (const s of parts.secrets) {
    out += `${parts.value.slice(pos, s.start)}***`
    pos = s.end
  }
  return out + parts.value.slice(pos)
}

/** `text` at `span` when no secret span touches it, else undefined: a message then names the part by position only. */
export function quotable(parts: ConnectionStringParts, span: Span): string | undefined {
  const touches = parts.secrets.some((s) => span.start < s.end + 1 && s.start < span.end + 1)
  return touches ? undefined : parts.value.slice(span.start, span.end)
}

/** Shorthand for messages about a raw value: the value masked as its parse says. */
export function maskedConnectionString(raw: string): string {
  return shownValue(parseConnectionString(raw))
}
