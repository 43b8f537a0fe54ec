// Live pages: fetch now, then again every few seconds while the tab is visible; the last good data stays on screen
// while a refresh is under way (no flicker, no layout shift), but never another page's data.
import { useEffect, useState } from 'preact/hooks'

export const POLL_MS = 3000

export interface Polled<T> {
  data?: T
  error?: Error
  refresh: () => void
}

export function usePoll<T>(load: () => Promise<T>, deps: unknown[], everyMs = POLL_MS): Polled<T> {
  const key = JSON.stringify(deps)
  const [state, setState] = useState<{ key?: string; data?: T; error?: Error }>({})
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let live = true
    let timer: ReturnType<typeof setTimeout> | undefined
    const run = () => {
      if (document.hidden) return // visibilitychange starts again
      load()
        .then(
          (data) => live && setState({ key, data }),
          (error: Error) => live && setState((s) => ({ key, data: s.key === key ? s.data : undefined, error })),
        )
        .finally(() => {
          if (live && everyMs > 0) timer = setTimeout(run, everyMs)
        })
    }
    const visible = () => {
      clearTimeout(timer)
      run()
    }
    run()
    document.addEventListener('visibilitychange', visible)
    return () => {
      live = false
      clearTimeout(timer)
      document.removeEventListener('visibilitychange', visible)
    }
  }, [key, tick])
  const own = state.key === key
  return { data: own ? state.data : undefined, error: own ? state.error : undefined, refresh: () => setTick((t) => t + 1) }
}
