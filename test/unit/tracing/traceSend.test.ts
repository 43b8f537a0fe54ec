// traceSend's two paths: with no SDK registered the write gets the app's batch object itself (no span per message,
// no copies: that was a fifth of the producer's CPU); with an SDK every message has its span and a copy carrying
// the span's context, also when the sampler records nothing (the context still propagates, as KafkaJS's does).
import { context, propagation, trace } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { AlwaysOffSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { ProducerBatch } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import { traceSend } from '../../../src/tracing/messaging.js'

const batch = (): ProducerBatch => ({
  topicMessages: [
    { topic: 'empty', messages: [] },
    { topic: 'a', messages: [{ value: '1', headers: { app: 'yes' } }, { value: '2' }] },
    { topic: 'b', messages: [{ value: '3', key: 'k' }] },
  ],
})

const written = async (b: ProducerBatch) => {
  let got: ProducerBatch | undefined
  await traceSend(b, async (traced) => {
    got = traced
  })
  return got!
}

afterEach(() => {
  trace.disable()
  propagation.disable()
  context.disable()
})

describe('traceSend', () => {
  it('without an SDK hands the batch on as given', async () => {
    const b = batch()
    expect(await written(b)).toBe(b)
  })

  it('with only a propagator (no tracer provider) hands the batch on as given', async () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator())
    const b = batch()
    expect(await written(b)).toBe(b)
  })

  it.each([
    ['recording', undefined, 3],
    ['sampled out', new AlwaysOffSampler(), 0],
  ] as const)('with an SDK (%s): a span per message and its context in a copy of each message', async (_name, sampler, exported) => {
    const exporter = new InMemorySpanExporter()
    trace.setGlobalTracerProvider(new BasicTracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor(exporter)] }))
    propagation.setGlobalPropagator(new W3CTraceContextPropagator())
    const b = batch()
    const got = await written(b)
    const messages = got.topicMessages!.flatMap((tm) => tm.messages)
    expect(messages.map((m) => m.value)).toEqual(['1', '2', '3'])
    expect(messages.every((m) => /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/.test(String(m.headers?.traceparent)))).toBe(true)
    expect(messages[0]!.headers?.app).toBe('yes')
    expect(b.topicMessages![1]!.messages[0]!.headers).toEqual({ app: 'yes' })
    expect(b.topicMessages![1]!.messages[1]!.headers).toBeUndefined()
    const spans = exporter.getFinishedSpans()
    expect(spans.map((s) => s.name)).toEqual(['send a', 'send a', 'send b'].slice(0, exported))
    if (exported) expect(spans[2]!.attributes['messaging.kafka.message.key']).toBe('k')
  })
})
