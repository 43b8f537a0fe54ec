// Numbers, sizes and times as the pages show them.
export const num = (v: string | number) => {
  const s = String(v)
  return /^-?\d+$/.test(s) ? BigInt(s).toLocaleString('en-US') : s
}

export function bytes(v: string | number): string {
  let n = Number(v)
  if (n < 1024) return `${n} B`
  for (const unit of ['KiB', 'MiB', 'GiB', 'TiB']) {
    n /= 1024
    if (n < 1024 || unit === 'TiB') return `${n.toFixed(n < 10 ? 1 : 0)} ${unit}`
  }
  return String(v)
}

export function duration(ms: string | number): string {
  const n = Number(ms)
  if (n < 0) return 'unlimited'
  const units: Array<[string, number]> = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1000],
  ]
  for (const [unit, size] of units) if (n >= size && n % size === 0) return `${n / size} ${unit}`
  return `${n} ms`
}

export function ago(ms: number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - ms) / 1000))
  return s < 60 ? `${s} s ago` : s < 3600 ? `${Math.floor(s / 60)} min ago` : new Date(ms).toISOString()
}

export const time = (ms: string | number) => new Date(Number(ms)).toISOString().replace('T', ' ').replace('Z', '')
