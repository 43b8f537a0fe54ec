// Calls to the console API: same origin, the bearer token (kept for this tab only) when one was given, JSON bodies
// (the server's CSRF check wants application/json).
const base = document.querySelector<HTMLMetaElement>('meta[name="pgq-base"]')?.content ?? ''
/** the server has a built-in bearer token: sign in before the first call */
export const wantsToken = document.querySelector<HTMLMetaElement>('meta[name="pgq-auth"]')?.content === 'bearer'
const TOKEN_KEY = 'kafkajs-pgqueue-token'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

export const token = {
  get: () => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string) => sessionStorage.setItem(TOKEN_KEY, value),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
}

async function call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  const bearer = token.get()
  if (bearer) headers.authorization = `Bearer ${bearer}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(`${base}/console/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const json = (await res.json().catch(() => null)) as { error?: string } | null
  if (!res.ok) throw new ApiError(res.status, json?.error ?? res.statusText)
  return json as T
}

type Params = Record<string, string | number | undefined>
const query = (params: Params) => {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v))
  const text = q.toString()
  return text ? `?${text}` : ''
}

export const get = <T>(path: string, params: Params = {}) => call<T>('GET', path + query(params))
export const post = <T>(path: string, body: unknown) => call<T>('POST', path, body)
