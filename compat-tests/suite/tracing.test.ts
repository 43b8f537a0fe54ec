// Tracing on both transports, as an app with an OpenTelemetry SDK (in-memory exporter) sees it. On kafka the spans
// come from @opentelemetry/instrumentation-kafkajs, on pgqueue from this package: the same names, kinds and
// parentage, and a W3C traceparent in the message headers. The bridge case sends Kafka -> pgQueue -> Kafka from
// inside each hop's handler and needs one unbroken trace. The app runs in a child process because the
// instrumentation patches `require('kafkajs')`, which vitest's module loader bypasses.
import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { describe, expect, inject, it } from 'vitest'
import { backendName, backendUnavailable, fileSchema } from '../harness.js'

const run = promisify(execFile)
const root = path.resolve(__dirname, '../..')

interface ExportedSpan {
  name: string
  kind: number
  traceId: string
  spanId: string
  parentSpanId?: string
  attributes: Record<string, unknown>
  links: string[]
}
interface Report {
  spans: ExportedSpan[]
  seen: Array<{ topic: string; traceparent?: string; activeSpanId?: string }>
}

const PRODUCER = 3
const CONSUMER = 4
const CLIENT = 2

async function tracedApp(env: Record<string, string | undefined>): Promise<Report> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'compat-tests/tracing/app.ts'], {
    cwd: root,
    env: { ...process.env, ...env },
    timeout: 120_000,
  })
  return JSON.parse(stdout.trim().split('\n').pop()!) as Report
}

function backendEnv(): Record<string, string | undefined> {
  return backendName === 'kafka'
    ? { DATAHUB_MESSAGING_TRANSPORT: 'kafka', KAFKA_BROKERS: inject('kafkaBrokers').join(',') }
    : { DATAHUB_MESSAGING_TRANSPORT: 'pgqueue', PG_URL: inject('pgUrl'), PG_SCHEMA: fileSchema() }
}

const only = (spans: ExportedSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name)
  expect(
    found.map((s) => s.name),
    `spans: ${spans.map((s) => s.name).join(', ')}`,
  ).toEqual([name])
  return found[0]!
}

describe.skipIf(backendUnavailable())(`tracing (${backendName})`, () => {
  it.each([
    ['eachMessage', undefined],
    ['eachBatch', '1'],
  ])('a sent message continues its trace in %s', { timeout: 150_000 }, async (_handler, eachBatch) => {
    const { spans, seen } = await tracedApp({ ...backendEnv(), MODE: 'roundtrip', EACH_BATCH: eachBatch })
    const root = only(spans, 'app')
    const topic = seen[0]!.topic
    const send = only(spans, `send ${topic}`)
    expect(send).toMatchObject({ kind: PRODUCER, traceId: root.traceId, parentSpanId: root.spanId })
    expect(send.attributes).toMatchObject({ 'messaging.destination.name': topic, 'messaging.operation.type': 'send' })
    expect(seen[0]!.traceparent).toBe(`00-${send.traceId}-${send.spanId}-01`)
    const process = only(spans, `process ${topic}`)
    expect(process.kind).toBe(CONSUMER)
    expect(process.attributes).toMatchObject({ 'messaging.destination.name': topic, 'messaging.operation.type': 'process' })
    if (eachBatch) {
      // a batch's process spans hang under its poll span and link to each message's send span
      const poll = only(spans, `poll ${topic}`)
      expect(poll.kind).toBe(CLIENT)
      expect(process).toMatchObject({ traceId: poll.traceId, parentSpanId: poll.spanId, links: [send.spanId] })
      expect(seen[0]!.activeSpanId).toBe(poll.spanId)
    } else {
      expect(process).toMatchObject({ traceId: send.traceId, parentSpanId: send.spanId })
      expect(seen[0]!.activeSpanId).toBe(process.spanId)
    }
    if (backendName === 'pgqueue') {
      const commit = only(spans, `commit ${topic}`)
      expect(commit.attributes).toMatchObject({ 'messaging.operation.type': 'settle', 'messaging.consumer.group.name': `g-${topic}` })
    }
  })

  // needs the broker and a database at once: the kafka run, with pgQueue on DATABASE_URL (else the embedded default)
  it.runIf(backendName === 'kafka')('one trace runs Kafka -> pgQueue -> Kafka', { timeout: 150_000 }, async () => {
    const schema = `tracing_bridge_${Date.now()}`
    const { spans, seen } = await tracedApp({ ...backendEnv(), MODE: 'bridge', PG_URL: process.env.DATABASE_URL, PG_SCHEMA: schema })
    if (process.env.DATABASE_URL) {
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL })
      await client.connect()
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => client.end())
    }
    let parent = only(spans, 'app')
    for (const [hop, system] of [
      [seen[0]!.topic, 'kafka'],
      [seen[1]!.topic, 'pgqueue'],
      [seen[2]!.topic, 'kafka'],
    ] as const) {
      const send = only(spans, `send ${hop}`)
      const process = only(spans, `process ${hop}`)
      expect(send, `send ${hop}`).toMatchObject({ traceId: parent.traceId, parentSpanId: parent.spanId })
      expect(send.attributes['messaging.system']).toBe(system)
      expect(process, `process ${hop}`).toMatchObject({ traceId: send.traceId, parentSpanId: send.spanId })
      parent = process
    }
  })
})
