// Hash routes (#/topic?name=x): the server serves one page, names travel as query parameters, back/forward work.
import { useEffect, useState } from 'preact/hooks'

export interface Route {
  page: string
  params: URLSearchParams
}

const parse = (): Route => {
  const [path, q] = location.hash.replace(/^#\/?/, '').split('?')
  return { page: path || 'topics', params: new URLSearchParams(q ?? '') }
}

export function href(page: string, params: Record<string, string | number | undefined> = {}): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v))
  const text = q.toString()
  return `#/${page}${text ? `?${text}` : ''}`
}

export function useRoute(): Route {
  const [route, setRoute] = useState(parse)
  useEffect(() => {
    const changed = () => setRoute(parse())
    addEventListener('hashchange', changed)
    return () => removeEventListener('hashchange', changed)
  }, [])
  return route
}
