// The results table (markdown, pgQueue and Kafka side by side) and the targets of issue 8.
import type { Backend } from './args.js'
import type { Row } from './types.js'

interface Target {
  /** pgQueue must reach at least / at most this */
  min?: number
  max?: number
  /** pgQueue must reach at least half of Kafka's value */
  halfOfKafka?: boolean
}

export const TARGETS: Record<string, Target> = {
  'produce.batch1': { min: 2_300, halfOfKafka: true },
  'produce.batch100': { halfOfKafka: true },
  'produce.batch1000': { min: 100_000, halfOfKafka: true },
  'consume.eachBatch': { min: 100_000, halfOfKafka: true },
  'consume.eachMessage': { min: 50_000, halfOfKafka: true },
  'fanout.deliveries': { min: 100_000, halfOfKafka: true },
  'parallel.messages': { halfOfKafka: true },
  'latency.p50': { max: 5 },
  'latency.p99': { max: 25 },
  'footprint.rss': { max: 250 },
  'transactions.perSecond': { halfOfKafka: true },
}

export interface TableLine {
  key: string
  label: string
  unit: string
  pgqueue?: Row
  kafka?: Row
  ratio?: number
  target: string
  met: boolean | null
}

const fmt = (v: number | undefined, unit: string): string => {
  if (v === undefined || Number.isNaN(v)) return '-'
  if (unit === 'ms') return v < 10 ? v.toFixed(2) : v.toFixed(1)
  if (unit === 'tuples/msg') return v.toFixed(4)
  if (unit === 'MB') return v.toFixed(0)
  if (unit === 'B/msg') return v < 10 ? v.toFixed(1) : v.toFixed(0)
  return Math.round(v).toLocaleString('en-US')
}

function describe(t: Target | undefined, unit: string): string {
  if (!t) return ''
  const parts: string[] = []
  if (t.min !== undefined) parts.push(`≥ ${fmt(t.min, unit)}`)
  if (t.max !== undefined) parts.push(`≤ ${fmt(t.max, unit)}`)
  if (t.halfOfKafka) parts.push('≥ ½ Kafka')
  return parts.join(', ')
}

/** Units where less is better (for picking the "better" of two middle runs). */
const LOWER_IS_BETTER = new Set(['ms', 'MB', 'B/msg', 'tuples/msg'])

/**
 * One row per key from several runs: the median run (for an even count, the better of the two middle ones), so a
 * single lucky or unlucky run does not decide the table. All runs stay in the JSON.
 */
export function medianRows(runs: Row[][]): Row[] {
  const keys: string[] = []
  for (const rows of runs) for (const r of rows) if (!keys.includes(r.key)) keys.push(r.key)
  return keys.map((key) => {
    const values = runs.map((rows) => rows.find((r) => r.key === key)).filter((r): r is Row => r !== undefined)
    const lower = LOWER_IS_BETTER.has(values[0]!.unit)
    // best first
    const sorted = [...values].sort((a, b) => (lower ? a.value - b.value : b.value - a.value))
    const picked = sorted[Math.floor((sorted.length - 1) / 2)]!
    return values.length > 1 ? { ...picked, detail: { ...picked.detail, runs: values.map((v) => v.value) } } : picked
  })
}

export function tableLines(results: Record<Backend, Row[]>): TableLine[] {
  const keys: string[] = []
  for (const rows of Object.values(results)) for (const r of rows) if (!keys.includes(r.key)) keys.push(r.key)
  return keys.map((key) => {
    const pgqueue = results.pgqueue.find((r) => r.key === key)
    const kafka = results.kafka.find((r) => r.key === key)
    const any = (pgqueue ?? kafka)!
    const t = TARGETS[key]
    const ratio = pgqueue && kafka && kafka.value > 0 && any.unit !== 'ms' && any.unit !== 'MB' ? pgqueue.value / kafka.value : undefined
    let met: boolean | null = null
    if (t && pgqueue) {
      met = true
      if (t.min !== undefined && !(pgqueue.value >= t.min)) met = false
      if (t.max !== undefined && !(pgqueue.value <= t.max)) met = false
      if (t.halfOfKafka) {
        if (ratio === undefined) met = t.min === undefined && t.max === undefined ? null : met
        else if (ratio < 0.5) met = false
      }
    }
    return { key, label: pgqueue?.label ?? any.label, unit: any.unit, pgqueue, kafka, ratio, target: describe(t, any.unit), met }
  })
}

export function markdownTable(lines: TableLine[]): string {
  const cell = (r: Row | undefined, unit: string) => (r ? `${fmt(r.value, unit)}${r.note ? ` (${r.note})` : ''}` : '-')
  const out = ['| Scenario | Unit | pgQueue | Kafka | pgQueue / Kafka | Target | Met |', '|---|---|---:|---:|---:|---|:---:|']
  for (const l of lines) {
    const met = l.met === null ? '' : l.met ? 'yes' : '**no**'
    out.push(
      `| ${l.label} | ${l.unit} | ${cell(l.pgqueue, l.unit)} | ${cell(l.kafka, l.unit)} | ${l.ratio === undefined ? '' : l.ratio.toFixed(2)} | ${l.target} | ${met} |`,
    )
  }
  return out.join('\n')
}
