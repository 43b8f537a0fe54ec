// traceEachBatch without an SDK starts the poll span only (the process span per message was about half of a
// consumer's CPU per message); with an SDK, the poll span and one process span per message, as before.
import { trace } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { EachBatchPayload } from 'kafkajs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { traceEachBatch } from '../../../src/tracing/messaging.js'

const payload = (n: number) =>
  ({
    batch: {
      topic: 't',
      partition: 0,
      messages: Array.from({ length: n }, (_, i) => ({ offset: String(i), key: null, value: Buffer.from('v'), headers: {}, timestamp: '0' })),
    },
  }) as unknown as EachBatchPayload

afterEach(() => {
  vi.restoreAllMocks()
  trace.disable()
})

describe('traceEachBatch', () => {
  it('without an SDK starts no span per message and runs the handler', async () => {
    const getTracer = vi.spyOn(trace, 'getTracer')
    const handler = vi.fn(async () => {})
    await traceEachBatch(handler, 'g')(payload(5))
    expect(handler).toHaveBeenCalledOnce()
    expect(getTracer).toHaveBeenCalledOnce()
  })

  it('with an SDK: the poll span and a process span per message', async () => {
    const exporter = new InMemorySpanExporter()
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))
    await traceEachBatch(async () => {}, 'g')(payload(3))
    expect(
      exporter
        .getFinishedSpans()
        .map((s) => s.name)
        .sort(),
    ).toEqual(['poll t', 'process t', 'process t', 'process t'])
  })
})
