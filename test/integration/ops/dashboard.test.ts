// Every series the Grafana dashboard queries is one the library really emits: real traffic on PostgreSQL (sends,
// a failed send, consumption, a dead-lettered message, a crashed consumer, a maintenance run), then one scrape of
// the ops server's /metrics, as Prometheus would do. Each selector of each panel must match a scraped series —
// same name, its label matchers satisfied with $system = pgqueue — that carries every label the query's `by`
// clauses and legend use. The dashboard's structure and provisioning are test/unit/ops/dashboard.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deadLetter } from '../../../src/deadLetter/index.js'
import { runMaintenance } from '../../../src/maintenance/run.js'
import { contextOf } from '../../../src/ops/context.js'
import { attachConsumerMetrics, attachDeadLetterMetrics, attachProducerMetrics } from '../../../src/ops/instrument.js'
import { createMetrics } from '../../../src/ops/metrics.js'
import { startOpsServer, type OpsServer } from '../../../src/ops/server.js'
import { deferred } from '../../helpers/db.js'
import { TARGET_LABELS, byLabels, readDashboard, selectors, type Matcher } from '../../helpers/grafanaDashboard.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('ops_dashboard')
let server: OpsServer
let scraped: Array<{ name: string; labels: Record<string, string> }>

/** Prometheus text format: `name{a="x",b="y"} value` lines (comments skipped). */
function parseExposition(text: string) {
  return text.split('\n').flatMap((line) => {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+\S+/.exec(line)
    if (!m) return []
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]))
    return [{ name: m[1]!, labels }]
  })
}

function satisfies(value: string | undefined, { op, value: wanted }: Matcher): boolean {
  const full = (re: string) => new RegExp(`^(?:${re})$`).test(value ?? '')
  if (op === '=') return (value ?? '') === wanted
  if (op === '!=') return (value ?? '') !== wanted
  return op === '=~' ? full(wanted) : !full(wanted)
}

beforeAll(async () => {
  const metrics = createMetrics(undefined, { processMetrics: true })
  server = await startOpsServer({ kafka: t.kafka, port: 0, metrics })
  const topic = await t.createTopic(1, 'dash')
  const dlq = await t.createTopic(1, 'dash_dlq')

  const producer = await t.producer({ allowAutoTopicCreation: false })
  attachProducerMetrics(producer, metrics)
  await producer.send({ topic, messages: [{ value: 'a' }, { value: 'poison' }, { value: 'b' }] })
  await expect(producer.send({ topic: uniqueName('missing'), messages: [{ value: 'x' }] })).rejects.toThrow()

  // consumption and a dead-lettered message
  const groupId = uniqueName('dash_g')
  const dl = deadLetter(t.kafka, { groupId, topic: dlq, maxAttempts: 2, backoff: { initialMs: 5, maxMs: 5 } })
  attachDeadLetterMetrics(dl, metrics)
  await dl.connect()
  const moved = deferred()
  dl.on(dl.events.DEAD_LETTER, () => moved.resolve())
  const handled = deferred()
  let good = 0
  const consumer = await t.consumer({ groupId })
  attachConsumerMetrics(consumer, metrics)
  await consumer.subscribe({ topic, fromBeginning: true })
  await consumer.run({
    eachMessage: dl.eachMessage(async ({ message }) => {
      if (message.value!.toString() === 'poison') throw new Error('bad payload')
      if (++good === 2) handled.resolve()
    }),
  })
  await Promise.all([moved.promise, handled.promise])
  await consumer.stop()
  await dl.disconnect()

  // a consumer that crashes and does not restart
  const crashed = deferred()
  const fragile = await t.consumer({ groupId: uniqueName('dash_crash'), retry: { retries: 0, restartOnFailure: async () => false } })
  attachConsumerMetrics(fragile, metrics)
  fragile.on(fragile.events.CRASH, () => crashed.resolve())
  await fragile.subscribe({ topic, fromBeginning: true })
  await fragile.run({
    eachMessage: async () => {
      throw new Error('handler bug')
    },
  })
  await crashed.promise

  metrics.recordMaintenance(await runMaintenance(contextOf(t.kafka)!))
  const res = await fetch(`${server.url}/metrics`)
  expect(res.status).toBe(200)
  scraped = parseExposition(await res.text())
}, 120_000)

afterAll(() => server?.close())

describe('Grafana dashboard against the scraped /metrics', () => {
  const dashboard = readDashboard()
  const system = 'pgqueue' // the $system variable's value for this transport
  for (const panel of dashboard.panels) {
    it(`${panel.title}: every series it queries is emitted, with the labels it uses`, () => {
      for (const target of panel.targets) {
        const expr = target.expr.replace(/\$\{?system\}?/g, system)
        const legend = [...(target.legendFormat ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]!)
        const used = [...new Set([...byLabels(expr), ...(byLabels(expr).length === 0 ? legend : [])])].filter((l) => !TARGET_LABELS.includes(l))
        for (const { metric, matchers } of selectors(expr)) {
          const series = scraped.filter((s) => s.name === metric && matchers.every((m) => satisfies(s.labels[m.label], m)))
          expect(series.length, `${panel.title}: no scraped series ${metric}${JSON.stringify(matchers)}`).toBeGreaterThan(0)
          for (const label of used) {
            expect(
              series.some((s) => label in s.labels),
              `${panel.title}: ${metric} has no label ${label} (${expr})`,
            ).toBe(true)
          }
        }
      }
    })
  }
})
