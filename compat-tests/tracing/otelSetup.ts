// An app's OpenTelemetry setup, before anything loads kafkajs: an in-memory exporter, the W3C propagator, async
// context, and @opentelemetry/instrumentation-kafkajs (how KafkaJS users get traces; it patches `require('kafkajs')`).
import { context, propagation, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { registerInstrumentations } from '@opentelemetry/instrumentation'
import { KafkaJsInstrumentation } from '@opentelemetry/instrumentation-kafkajs'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'

export const exporter = new InMemorySpanExporter()
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
trace.setGlobalTracerProvider(provider)
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
propagation.setGlobalPropagator(new W3CTraceContextPropagator())
registerInstrumentations({ tracerProvider: provider, instrumentations: [new KafkaJsInstrumentation()] })
