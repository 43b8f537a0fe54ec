// The anchors table (markdown), from an anchors results file's rows: printed by the run, and written into README.md
// and docs/performance.md by scripts/performance-table.ts.
import { VERSIONS, type Peer } from './versions.js'

export type System = 'ours' | Peer | 'kafka'

export interface AnchorRow {
  key: string
  label: string
  unit: string
  /** median per system; null where the system has no such scenario (or did not run) */
  values: Record<System, number | null>
  runs: Record<System, number[]>
  /** ours / the best peer's median (keyed over 1,024 partitions: / the same sends to one partition) */
  ratio: number | null
}

const fmt = (v: number | null | undefined, key: string, system: System) =>
  v !== null && v !== undefined ? Math.round(v).toLocaleString('en-US') : system === 'pgmq' && key.startsWith('fanout.') ? '(copies)' : '—'

export function anchorsTable(rows: AnchorRow[]): string {
  const kafka = rows.some((r) => (r.values.kafka ?? null) !== null)
  const out = [
    `| scenario | unit | this library | PgQue ${VERSIONS.pgque} | pgmq ${VERSIONS.pgmq} | ours / best peer |${kafka ? ' Kafka | ours / Kafka |' : ''}`,
    `|---|---|---:|---:|---:|---:|${kafka ? '---:|---:|' : ''}`,
  ]
  for (const r of rows) {
    const k = r.values.kafka ?? null
    const vsKafka = k !== null && r.values.ours !== null && k > 0 ? (r.values.ours / k).toFixed(2) : ''
    out.push(
      `| ${r.label} | ${r.unit} | ${fmt(r.values.ours, r.key, 'ours')} | ${fmt(r.values.pgque, r.key, 'pgque')} | ${fmt(r.values.pgmq, r.key, 'pgmq')} | ${r.ratio === null ? '' : `**${r.ratio.toFixed(2)}**`} |${kafka ? ` ${fmt(k, r.key, 'kafka')} | ${vsKafka} |` : ''}`,
    )
  }
  return out.join('\n')
}
