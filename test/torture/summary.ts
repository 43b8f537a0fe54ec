// The run's report: a summary table (operations, faults, deliveries, duplicates, violations by kind) and, per
// violation kind found, the seed to repeat it and a few events of the history that show it.
import { VIOLATION_KINDS, type CheckResult } from './checker.js'
import type { HistoryEvent } from './history.js'

const row = (label: string, value: string | number) => `  ${label.padEnd(34)} ${String(value).padStart(10)}`

/** Seconds from the workers being ready to the earliest event that shows a violation: how fast the bug is found. */
export function secondsToFirstViolation(events: HistoryEvent[], { violations }: CheckResult): number | undefined {
  const ready = events.find((e) => e.k === 'stat' && e.name === 'workers.ready')?.t ?? events[0]?.t
  const times = violations.flatMap((v) => v.excerpt.map((e) => e.t))
  return ready === undefined || times.length === 0 ? undefined : Math.max(0, (Math.min(...times) - ready) / 1000)
}

export interface RunPhases {
  faultSeconds: number
  drainSeconds: number
  /** events in the history */
  events: number
}

export function summarize(
  seed: number,
  transport: string,
  operations: Record<string, number>,
  { counts, violations }: CheckResult,
  phases: RunPhases,
  firstAfter?: number,
): string {
  const rate = (n: number) => `${(n / Math.max(1, phases.faultSeconds + phases.drainSeconds)).toFixed(1)}/s`
  const lines = [
    `torture summary (${transport}, seed ${seed})`,
    'run',
    row('faults phase (s)', phases.faultSeconds.toFixed(0)),
    row('drain (s)', phases.drainSeconds.toFixed(0)),
    row('history events', phases.events),
    row('acknowledged per second', rate(counts.acked)),
    row('deliveries per second', rate(counts.deliveries)),
    'operations',
  ]
  const ops = Object.entries(operations).sort()
  for (const [k, n] of ops) if (!k.startsWith('cover ')) lines.push(row(k, n))
  // each option that changes what is committed, as drawn and exercised (members; docs/guarantees.md's table)
  lines.push('coverage (members that exercised it)')
  for (const [k, n] of ops) if (k.startsWith('cover ')) lines.push(`  ${k.slice(6).padEnd(60)} ${String(n).padStart(4)}`)
  lines.push('faults injected')
  const faults = Object.entries(counts.faults)
  if (faults.length === 0) lines.push(row('(none)', 0))
  for (const [k, n] of faults.sort()) lines.push(row(k, n))
  lines.push(
    'deliveries',
    row('acknowledged messages', counts.acked),
    row('aborted / rolled back (must stay invisible)', counts.aborted),
    row('outcome unknown (ambiguous)', counts.ambiguous),
    row('deliveries', counts.deliveries),
    row('duplicate deliveries (at-least-once)', counts.duplicates),
    row('plain sends stored twice (app retry)', counts.writeDuplicates),
    row('poison messages stored', counts.poison),
    row('dead-letter entries', counts.deadLettered),
    row('members crashed for good (no restart)', counts.crashedForGood),
    row('commits observed', counts.commits),
    row('audited (final fresh group)', counts.audited),
    'violations',
  )
  const byKind = new Map<string, number>()
  for (const v of violations) if (v.excerpt.length > 0) byKind.set(v.kind, (byKind.get(v.kind) ?? 0) + 1)
  for (const v of violations) {
    const more = /^… and (\d+) more/.exec(v.message)
    if (more) byKind.set(v.kind, (byKind.get(v.kind) ?? 0) + Number(more[1]))
  }
  for (const kind of VIOLATION_KINDS) lines.push(row(kind, byKind.get(kind) ?? 0))
  const total = [...byKind.values()].reduce((a, b) => a + b, 0)
  lines.push(row('TOTAL', total))
  if (total > 0) {
    lines.push('', `VIOLATIONS — repeat with: npm run check:torture -- --seed ${seed} (and the same options)`)
    if (firstAfter !== undefined) lines.push(`first violating event ${firstAfter.toFixed(1)} s after the workers were ready`)
    const shown = new Map<string, number>()
    for (const v of violations) {
      const n = shown.get(v.kind) ?? 0
      if (n >= 3) continue
      shown.set(v.kind, n + 1)
      lines.push(`[${v.kind}] ${v.message}`)
      for (const e of v.excerpt) lines.push(`    ${formatEvent(e)}`)
    }
  }
  return lines.join('\n')
}

function formatEvent(e: HistoryEvent): string {
  const { t, w, k, ...rest } = e
  return `${new Date(t).toISOString().slice(11, 23)} ${w.padEnd(8)} ${k.padEnd(5)} ${JSON.stringify(rest)}`
}
