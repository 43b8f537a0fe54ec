// The Grafana dashboard only queries series this package exports: every metric name in its expressions is
// registered by createMetrics (histograms as _bucket), with processMetrics: true for the Node.js process panel.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createMetrics } from '../../../src/ops/metrics.js'

const dashboard = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../../examples/grafana/kafkajs-pgqueue.json'), 'utf8')) as {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>
}
const PROMQL = new Set(['sum', 'by', 'rate', 'min', 'histogram_quantile', 'le', 'consumer_group', 'topic', 'messaging_priority', 'policy', 'instance', 'messaging_system'])

describe('Grafana dashboard', () => {
  it('queries only metrics createMetrics registers', async () => {
    const metrics = createMetrics(undefined, { processMetrics: true })
    const names = new Set<string>()
    for (const m of await metrics.registry.getMetricsAsJSON()) {
      names.add(m.name)
      if (String(m.type) === 'histogram') names.add(`${m.name}_bucket`)
    }
    const queried = dashboard.panels.flatMap((p) => p.targets.flatMap((t) => t.expr.replace(/"[^"]*"|\[[^\]]*\]|\$\w+/g, '').match(/[a-z_][a-z0-9_]*/g) ?? []))
    const unknown = [...new Set(queried)].filter((n) => !PROMQL.has(n) && !names.has(n))
    expect(unknown).toEqual([])
    expect(queried).toContain('messaging_queue_time_seconds_bucket')
    expect(queried).toContain('messaging_consumer_lag')
  })

  it('offers the default Node.js process metrics only when asked', async () => {
    const plain = (await createMetrics().registry.getMetricsAsJSON()).map((m) => m.name)
    const withProcess = (await createMetrics(undefined, { processMetrics: true }).registry.getMetricsAsJSON()).map((m) => m.name)
    expect(plain).not.toContain('process_cpu_seconds_total')
    expect(withProcess).toContain('process_cpu_seconds_total')
    expect(withProcess).toContain('nodejs_eventloop_lag_p99_seconds')
  })
})
