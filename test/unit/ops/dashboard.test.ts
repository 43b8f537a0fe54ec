// examples/grafana/ as Grafana and Prometheus would load it (there is no Grafana here to load it into): the
// provisioning files have the fields Grafana's file provisioning reads and point at the files docker-compose.yml
// mounts, and the dashboard is a well-formed model whose queries use only its own variables and the labels their
// `by` clauses keep. That every queried series is one the library emits is test/integration/ops/dashboard.test.ts.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { createMetrics } from '../../../src/ops/metrics.js'
import { DEFAULT_OPS_PORT } from '../../../src/ops/server.js'
import { GRAFANA_DIR, byLabels, readDashboard, selectors, variableReferences } from '../../helpers/grafanaDashboard.js'

const yaml = (file: string) => parse(fs.readFileSync(path.join(GRAFANA_DIR, file), 'utf8'))
const compose = yaml('docker-compose.yml') as { services: Record<string, { volumes?: string[] }> }
const dashboard = readDashboard()
/** Grafana's own variables, always defined */
const BUILTIN_VARIABLES = new Set(['__rate_interval', '__interval', '__range', '__all'])

describe('Grafana provisioning', () => {
  const mounts = new Map(compose.services.grafana!.volumes!.map((v) => [v.split(':')[1]!, path.join(GRAFANA_DIR, v.split(':')[0]!)]))

  it('mounts the provisioning folder where Grafana reads it', () => {
    expect(mounts.get('/etc/grafana/provisioning')).toBe(path.join(GRAFANA_DIR, 'provisioning'))
  })

  it('has a file dashboard provider whose folder holds the dashboard', () => {
    const { apiVersion, providers } = yaml('provisioning/dashboards/kafkajs-pgqueue.yml') as {
      apiVersion: number
      providers: Array<{ name: string; type: string; options: { path: string } }>
    }
    expect(apiVersion).toBe(1)
    expect(providers).toHaveLength(1)
    expect(providers[0]).toMatchObject({ name: expect.any(String), type: 'file' })
    const mounted = [...mounts].find(([target]) => path.posix.dirname(target) === providers[0]!.options.path)
    expect(mounted?.[1], 'a dashboard file mounted into the provider folder').toBe(path.join(GRAFANA_DIR, 'kafkajs-pgqueue.json'))
  })

  it('has one default Prometheus datasource, on the Prometheus service that scrapes the ops server', () => {
    const { apiVersion, datasources } = yaml('provisioning/datasources/prometheus.yml') as {
      apiVersion: number
      datasources: Array<Record<string, unknown>>
    }
    expect(apiVersion).toBe(1)
    expect(datasources.filter((d) => d.isDefault === true)).toHaveLength(1)
    const [ds] = datasources
    expect(ds).toMatchObject({ name: expect.any(String), type: 'prometheus', access: 'proxy' })
    expect(new URL(String(ds!.url)).hostname).toBe('prometheus')
    expect(compose.services.prometheus).toBeDefined()
    const prometheus = yaml('prometheus.yml') as { scrape_configs: Array<{ static_configs: Array<{ targets: string[] }> }> }
    const targets = prometheus.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets))
    expect(targets.map((t) => Number(t.split(':').pop()))).toContain(DEFAULT_OPS_PORT)
  })
})

describe('Grafana dashboard', () => {
  const variables = new Map(dashboard.templating.list.map((v) => [v.name, v]))

  it('is a dashboard model Grafana accepts: uid, schema version, panels with unique ids on the 24-column grid', () => {
    expect(dashboard.title).toBeTruthy()
    expect(dashboard.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/)
    expect(Number.isInteger(dashboard.schemaVersion)).toBe(true)
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length)
    const cells = new Set<string>()
    for (const p of dashboard.panels) {
      const { x, y, w, h } = p.gridPos
      expect([x, y, w, h].every(Number.isInteger) && x >= 0 && y >= 0 && w > 0 && h > 0 && x + w <= 24, `${p.title} gridPos`).toBe(true)
      for (let i = x; i < x + w; i++)
        for (let j = y; j < y + h; j++) {
          expect(cells.has(`${i},${j}`), `${p.title} overlaps another panel`).toBe(false)
          cells.add(`${i},${j}`)
        }
      expect(p.targets.length, p.title).toBeGreaterThan(0)
      expect(new Set(p.targets.map((t) => t.refId)).size, `${p.title}: refIds`).toBe(p.targets.length)
    }
  })

  it('queries the provisioned datasource through its datasource variable', () => {
    const ds = variables.get('datasource')
    expect(ds).toMatchObject({ type: 'datasource', query: 'prometheus' })
    for (const p of dashboard.panels) expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' })
  })

  it('uses only defined variables, and legends only labels the query keeps', () => {
    for (const p of dashboard.panels) {
      for (const t of p.targets) {
        for (const name of variableReferences(t.expr)) expect(variables.has(name) || BUILTIN_VARIABLES.has(name), `${p.title}: $${name}`).toBe(true)
        expect(selectors(t.expr).length, `${p.title}: ${t.expr}`).toBeGreaterThan(0)
        // an aggregation keeps only its `by` labels; an expression without one keeps the series' own (the
        // integration test checks those exist)
        const aggregated = /^\s*(sum|min|max|avg|count)\b/.test(t.expr)
        const kept = byLabels(t.expr)
        for (const [, label] of (t.legendFormat ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g)) {
          if (aggregated || kept.length > 0) expect(kept, `${p.title}: legend {{${label}}} of ${t.expr}`).toContain(label)
        }
      }
    }
  })

  it('offers the default Node.js process metrics only when asked', async () => {
    const plain = (await createMetrics().registry.getMetricsAsJSON()).map((m) => m.name)
    const withProcess = (await createMetrics(undefined, { processMetrics: true }).registry.getMetricsAsJSON()).map((m) => m.name)
    expect(plain).not.toContain('process_cpu_seconds_total')
    expect(withProcess).toContain('process_cpu_seconds_total')
    expect(withProcess).toContain('nodejs_eventloop_lag_p99_seconds')
  })
})
