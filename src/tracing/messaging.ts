// OpenTelemetry spans for messaging, shaped like @opentelemetry/instrumentation-kafkajs's so that a trace crosses
// between a KafkaJS service and a pgQueue one: `send <topic>` (PRODUCER) per message with the W3C context
// injected into its headers, `process <topic>` (CONSUMER) per handled message whose parent is the context
// extracted from those headers, `poll <topic>` (CLIENT) around an eachBatch with a linked `process` span per
// message, and `commit <topic>` (CLIENT, operation type settle) per offset commit.
import type * as Api from '@opentelemetry/api'
import type { EachBatchHandler, EachMessageHandler, IHeaders, KafkaMessage, Message, ProducerBatch } from 'kafkajs'
import { otel } from './otel.js'

export const MESSAGING_SYSTEM = 'pgqueue'
const TRACER = 'kafkajs-pgqueue'

/** Header values are strings or Buffers (a KafkaJS header may also be an array: the first value counts). */
const headerGetter: Api.TextMapGetter<IHeaders | undefined> = {
  get(carrier, key) {
    if (!carrier) return undefined
    const found = Object.keys(carrier).find((k) => k.toLowerCase() === key)
    const value = found === undefined ? undefined : carrier[found]
    const first = Array.isArray(value) ? value[0] : value
    return first === undefined ? undefined : first.toString()
  },
  keys: (carrier) => (carrier ? Object.keys(carrier) : []),
}

function tracer(api: typeof Api): Api.Tracer {
  return api.trace.getTracer(TRACER)
}

function keyAttribute(message: { key?: Buffer | string | null }): string | undefined {
  return message.key === null || message.key === undefined ? undefined : message.key.toString()
}

/** Ends every span, marking them failed when `work` rejects (error.type is the error's class name, as the instrumentation does). */
async function endAfter<T>(api: typeof Api, spans: Api.Span[], work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (err) {
    const type = err instanceof Error ? err.constructor.name : '_OTHER'
    for (const span of spans) {
      span.setAttribute('error.type', type)
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) })
    }
    throw err
  } finally {
    for (const span of spans) span.end()
  }
}

/**
 * True when a span does nothing: it records nothing, has no valid context (the API's no-op tracer, no SDK
 * registered, or tracing suppressed) and the propagators inject nothing for it. Every other span a tracer starts
 * with the same parent is then the same no-op, so a send or a batch can skip the rest.
 */
function inert(api: typeof Api, parent: Api.Context, span: Api.Span): boolean {
  if (span.isRecording() || api.trace.isSpanContextValid(span.spanContext())) return false
  const carrier: Record<string, string> = {}
  api.propagation.inject(api.trace.setSpan(parent, span), carrier)
  return Object.keys(carrier).length === 0
}

function sendSpan(api: typeof Api, topic: string, message: Message, parent: Api.Context): Api.Span {
  return tracer(api).startSpan(
    `send ${topic}`,
    {
      kind: api.SpanKind.PRODUCER,
      attributes: {
        'messaging.system': MESSAGING_SYSTEM,
        'messaging.destination.name': topic,
        'messaging.operation.name': 'send',
        'messaging.operation.type': 'send',
        'messaging.kafka.message.key': keyAttribute(message),
        'messaging.destination.partition.id': message.partition === undefined ? undefined : String(message.partition),
      },
    },
    parent,
  )
}

/**
 * One `send <topic>` span per message; `write` gets copies of the messages whose headers carry the span's
 * context (the caller's objects are left as they were). When the first span is inert (no SDK), `write` gets the
 * batch as given: no span per message, no copies.
 */
export function traceSend<T>(batch: ProducerBatch, write: (batch: ProducerBatch) => Promise<T>): Promise<T> {
  const api = otel()
  if (!api) return write(batch)
  const parent = api.context.active()
  const given = batch.topicMessages ?? []
  const first = given.find((tm) => (tm?.messages?.length ?? 0) > 0)
  if (!first) return write(batch)
  const probe = sendSpan(api, first.topic, first.messages[0]!, parent)
  if (inert(api, parent, probe)) {
    probe.end()
    return write(batch)
  }
  const spans: Api.Span[] = []
  const topicMessages = given.map(({ topic, messages }) => ({
    topic,
    messages: messages.map((message: Message) => {
      const span = spans.length === 0 ? probe : sendSpan(api, topic, message, parent)
      spans.push(span)
      // headers that are not an object are left as given, for the producer's validation to refuse
      const own = message.headers as unknown
      if (own !== undefined && own !== null && (typeof own !== 'object' || Array.isArray(own))) return message
      const headers: IHeaders = { ...message.headers }
      api.propagation.inject(api.trace.setSpan(parent, span), headers)
      return { ...message, headers }
    }),
  }))
  return endAfter(api, spans, () => write({ ...batch, topicMessages }))
}

function consumerAttributes(topic: string, partition: number, groupId: string): Api.Attributes {
  return {
    'messaging.system': MESSAGING_SYSTEM,
    'messaging.destination.name': topic,
    'messaging.destination.partition.id': String(partition),
    'messaging.consumer.group.name': groupId,
  }
}

function processSpan(api: typeof Api, topic: string, partition: number, groupId: string, message: KafkaMessage): Api.SpanOptions {
  return {
    kind: api.SpanKind.CONSUMER,
    attributes: {
      ...consumerAttributes(topic, partition, groupId),
      'messaging.operation.name': 'process',
      'messaging.operation.type': 'process',
      'messaging.kafka.message.key': keyAttribute(message),
      'messaging.kafka.offset': message.offset,
    },
  }
}

/** eachMessage inside a `process <topic>` span, child of the producer's context found in the headers. */
export function traceEachMessage(handler: EachMessageHandler, groupId: string): EachMessageHandler {
  return (payload) => {
    const api = otel()
    if (!api) return handler(payload)
    const { topic, partition, message } = payload
    const parent = api.propagation.extract(api.ROOT_CONTEXT, message.headers, headerGetter)
    const span = tracer(api).startSpan(`process ${topic}`, processSpan(api, topic, partition, groupId, message), parent)
    return endAfter(api, [span], () => api.context.with(api.trace.setSpan(parent, span), () => handler(payload)))
  }
}

/** eachBatch inside a `poll <topic>` span, with one `process` span per message linked to its producer's context. */
export function traceEachBatch(handler: EachBatchHandler, groupId: string): EachBatchHandler {
  return (payload) => {
    const api = otel()
    if (!api) return handler(payload)
    const { topic, partition, messages } = payload.batch
    const poll = tracer(api).startSpan(
      `poll ${topic}`,
      {
        kind: api.SpanKind.CLIENT,
        attributes: {
          ...consumerAttributes(topic, partition, groupId),
          'messaging.operation.name': 'poll',
          'messaging.operation.type': 'receive',
          'messaging.batch.message_count': messages.length,
        },
      },
      api.ROOT_CONTEXT,
    )
    const inPoll = api.trace.setSpan(api.context.active(), poll)
    const spans = [poll]
    // an inert poll span (no SDK): every process span under it would be inert too
    if (inert(api, api.ROOT_CONTEXT, poll)) return endAfter(api, spans, () => api.context.with(inPoll, () => handler(payload)))
    for (const message of messages) {
      const producer = api.trace.getSpan(api.propagation.extract(api.ROOT_CONTEXT, message.headers, headerGetter))?.spanContext()
      const options = { ...processSpan(api, topic, partition, groupId, message), links: producer ? [{ context: producer }] : [] }
      spans.push(tracer(api).startSpan(`process ${topic}`, options, inPoll))
    }
    return endAfter(api, spans, () => api.context.with(inPoll, () => handler(payload)))
  }
}

/** An offset commit of `groupId` as a `commit <topic>` settle span (topics joined when one commit spans several). */
export function traceSettle<T>(groupId: string, topics: string[], commit: () => Promise<T>): Promise<T> {
  const api = otel()
  if (!api) return commit()
  const names = [...new Set(topics)].sort()
  const span = tracer(api).startSpan(`commit ${names.join(',')}`, {
    kind: api.SpanKind.CLIENT,
    attributes: {
      'messaging.system': MESSAGING_SYSTEM,
      'messaging.destination.name': names.length === 1 ? names[0] : undefined,
      'messaging.consumer.group.name': groupId,
      'messaging.operation.name': 'commit',
      'messaging.operation.type': 'settle',
    },
  })
  return endAfter(api, [span], () => api.context.with(api.trace.setSpan(api.context.active(), span), commit))
}
