// Load: 8 producer processes and 8 consumer processes (one group) on a 16-partition topic for LOAD_SECONDS.
// Reports throughput, duplicates, lost messages and per-key order violations; lost and order violations must be 0.
// Short form (CI): LOAD_SECONDS=15 (default). Long form: LOAD_SECONDS=600 npm run test:load.
import { mkdirSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { uniqueName, useTestKafka } from '../helpers/kafka.js'
import { spawnFixture, type Child } from '../helpers/processes.js'

const t = useTestKafka('load')
const SECONDS = Number(process.env.LOAD_SECONDS ?? 15)
const PRODUCERS = 8
const CONSUMERS = 8
const PARTITIONS = 16
const KEYS = 32
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface Delivery {
  value: string
  at: number
  consumer: number
  line: number
  index: number
}

function deliveries(consumers: Child[]): Delivery[] {
  const out: Delivery[] = []
  consumers.forEach((c, consumer) =>
    c.lines.forEach((l, line) => {
      if (!l.startsWith('b ')) return
      const [, , at, values] = l.split(' ')
      values.split(',').forEach((value, index) => out.push({ value, at: Number(at), consumer, line, index }))
    }),
  )
  return out
}

function ackedValues(producers: Child[]): string[] {
  const out: string[] = []
  producers.forEach((p, P) => {
    for (const l of p.lines) {
      if (!l.startsWith('a ')) continue
      const [, first, last] = l.split(' ')
      for (let n = Number(first); n <= Number(last); n++) out.push(`${P}.${n}`)
    }
  })
  return out
}

/** Per key (producer + n % KEYS), the first delivery of each message must come in increasing n. */
function orderViolations(all: Delivery[]): number {
  const sorted = [...all].sort((a, b) => a.at - b.at || a.consumer - b.consumer || a.line - b.line || a.index - b.index)
  const highest = new Map<string, number>()
  const seen = new Set<string>()
  let violations = 0
  for (const d of sorted) {
    if (seen.has(d.value)) continue
    seen.add(d.value)
    const [P, n] = d.value.split('.').map(Number)
    const key = `${P}:${n % KEYS}`
    if (n < (highest.get(key) ?? -1)) violations++
    highest.set(key, Math.max(highest.get(key) ?? -1, n))
  }
  return violations
}

describe('load', () => {
  it(`${PRODUCERS} producers and ${CONSUMERS} consumers for ${SECONDS} s: nothing lost, order per key kept`, async () => {
    const topic = uniqueName('load')
    const group = uniqueName('g')
    const admin = t.kafka.admin()
    await admin.connect()
    await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }] })
    await admin.disconnect()
    const env = { PG_URL: t.db.connectionString, PG_SCHEMA: t.db.schema, TOPIC: topic }

    const consumers = Array.from({ length: CONSUMERS }, () => spawnFixture('loadConsumer.ts', { ...env, GROUP: group }))
    await Promise.all(consumers.map((c) => c.waitForLine((l) => l === 'ready', 60_000)))
    const startAt = Date.now() + 4000
    const producers = Array.from({ length: PRODUCERS }, (_, P) =>
      spawnFixture('loadProducer.ts', { ...env, P: String(P), KEYS: String(KEYS), START_AT: String(startAt), DURATION_MS: String(SECONDS * 1000) }),
    )
    const codes = await Promise.all(producers.map((p) => p.exited))
    const producedAt = Date.now()
    expect(codes).toEqual(Array(PRODUCERS).fill(0))
    const sent = ackedValues(producers)
    const sentSet = new Set(sent)
    // drain: every acknowledged message delivered (bounded)
    const drainDeadline = Date.now() + 60_000 + SECONDS * 2000
    let delivered = new Set<string>()
    while (Date.now() < drainDeadline) {
      delivered = new Set(deliveries(consumers).map((d) => d.value))
      if ([...sentSet].every((v) => delivered.has(v))) break
      await sleep(250)
    }
    const drainedAt = Date.now()
    for (const c of consumers) c.proc.kill('SIGTERM')
    await Promise.all(consumers.map((c) => c.exited))

    const all = deliveries(consumers)
    const unique = new Set(all.map((d) => d.value))
    const lost = [...sentSet].filter((v) => !unique.has(v))
    const duplicates = all.length - unique.size
    const violations = orderViolations(all)
    const produceMs = Math.max(...producers.map((p) => Number(p.lines.find((l) => l.startsWith('done '))?.split(' ')[2] ?? SECONDS * 1000)))
    // a loop, not Math.min(...all): spread arguments overflow the stack past ~120k deliveries
    const firstAt = all.reduce((m, d) => Math.min(m, d.at), Infinity)
    const lastAt = all.reduce((m, d) => Math.max(m, d.at), -Infinity)
    const report = {
      seconds: SECONDS,
      producers: PRODUCERS,
      consumers: CONSUMERS,
      partitions: PARTITIONS,
      sent: sentSet.size,
      producerErrors: producers.reduce((n, p) => n + p.lines.filter((l) => l.startsWith('e ')).length, 0),
      delivered: unique.size,
      deliveries: all.length,
      duplicates,
      lost: lost.length,
      orderViolations: violations,
      produceRate: Math.round(sentSet.size / (produceMs / 1000)),
      consumeRate: Math.round(unique.size / Math.max(1, (lastAt - firstAt) / 1000)),
      drainMs: drainedAt - producedAt,
      perConsumer: consumers.map((_, i) => all.filter((d) => d.consumer === i).length),
      crashes: consumers.reduce((n, c) => n + c.lines.filter((l) => l.startsWith('crash')).length, 0),
    }
    console.log(`load: ${JSON.stringify(report)}`)
    mkdirSync('.cache', { recursive: true })
    writeFileSync('.cache/load.report.json', `${JSON.stringify(report, null, 2)}\n`)
    expect(report.sent).toBeGreaterThan(PRODUCERS * 50)
    expect(lost).toEqual([])
    expect(violations).toBe(0)
    // nothing delivered that was never sent
    expect([...unique].filter((v) => !sentSet.has(v))).toEqual([])
  })
})
