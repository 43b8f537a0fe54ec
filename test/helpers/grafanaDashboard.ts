// Reading examples/grafana/ the way Grafana and Prometheus would: the dashboard model, its variables, and the
// series selectors of each PromQL expression (enough PromQL for the expressions a dashboard holds: selectors with
// label matchers, `by (...)` clauses, range vectors, functions and comparisons).
import fs from 'node:fs'
import path from 'node:path'

export const GRAFANA_DIR = path.resolve(__dirname, '../../examples/grafana')

export interface Target {
  refId: string
  expr: string
  legendFormat?: string
}
export interface Panel {
  id: number
  type: string
  title: string
  datasource?: { type?: string; uid?: string }
  gridPos: { x: number; y: number; w: number; h: number }
  targets: Target[]
}
export interface Variable {
  name: string
  type: string
  query: string
  includeAll?: boolean
  allValue?: string
}
export interface Dashboard {
  title: string
  uid: string
  schemaVersion: number
  templating: { list: Variable[] }
  panels: Panel[]
}

export function readDashboard(): Dashboard {
  return JSON.parse(fs.readFileSync(path.join(GRAFANA_DIR, 'kafkajs-pgqueue.json'), 'utf8')) as Dashboard
}

export interface Matcher {
  label: string
  op: '=' | '!=' | '=~' | '!~'
  value: string
}
export interface Selector {
  metric: string
  matchers: Matcher[]
}

/** The labels of every `by (...)` clause of an expression. */
export function byLabels(expr: string): string[] {
  return [...expr.matchAll(/\bby\s*\(([^)]*)\)/g)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((l) => l.trim())
      .filter(Boolean),
  )
}

/** The series selectors of an expression: metric names with their label matchers (function names excluded). */
export function selectors(expr: string): Selector[] {
  const bare = expr.replace(/\b(by|without)\s*\([^)]*\)/g, ' ').replace(/\[[^\]]*\]/g, ' ')
  const found: Selector[] = []
  for (const m of bare.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?(\s*\()?/g)) {
    if (m[3]) continue // a function call
    const matchers = [...(m[2] ?? '').matchAll(/(\w+)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)].map((x) => ({
      label: x[1]!,
      op: x[2] as Matcher['op'],
      value: x[3]!,
    }))
    found.push({ metric: m[1]!, matchers })
  }
  return found
}

/** `$name` / `${name}` references of an expression or field. */
export function variableReferences(text: string): string[] {
  return [...text.matchAll(/\$\{?(\w+)\}?/g)].map((m) => m[1]!)
}

/** Labels Prometheus adds to every scraped series. */
export const TARGET_LABELS = ['instance', 'job']
