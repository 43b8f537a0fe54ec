import kafkajs from 'kafkajs'
import { describe, expect, it, vi } from 'vitest'
import { KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import { adminEvents, consumerEvents, createInstrumentationEmitter, producerEvents } from '../../../src/kafkajs/instrumentation.js'

const realKafka = () => new kafkajs.Kafka({ brokers: ['localhost:1'], logLevel: kafkajs.logLevel.NOTHING })

describe('event maps', () => {
  it('equal the maps of kafkajs clients at runtime (constructed, never connected)', () => {
    const kafka = realKafka()
    expect(consumerEvents).toStrictEqual({ ...kafka.consumer({ groupId: 'g' }).events })
    expect(producerEvents).toStrictEqual({ ...kafka.producer({ createPartitioner: kafkajs.Partitioners.DefaultPartitioner }).events })
    expect(adminEvents).toStrictEqual({ ...kafka.admin().events })
  })

  it('reject unknown names with the exact kafkajs message', () => {
    const kafka = realKafka()
    for (const [ours, theirs] of [
      [createInstrumentationEmitter(consumerEvents), kafka.consumer({ groupId: 'g' })],
      [createInstrumentationEmitter(producerEvents), kafka.producer({ createPartitioner: kafkajs.Partitioners.DefaultPartitioner })],
      [createInstrumentationEmitter(adminEvents), kafka.admin()],
    ] as const) {
      let expected: unknown
      try {
        ;(theirs as { on(name: string, listener: () => void): unknown }).on('nope', () => {})
      } catch (e) {
        expected = e
      }
      expect(expected).toBeInstanceOf(KafkaJSNonRetriableError)
      expect(() => ours.on('nope', () => {})).toThrow(KafkaJSNonRetriableError)
      expect(() => ours.on('nope', () => {})).toThrow((expected as Error).message)
    }
    expect(() => createInstrumentationEmitter(producerEvents).on('x', () => {})).toThrow(
      'Event name should be one of producer.events.CONNECT, producer.events.DISCONNECT, producer.events.REQUEST, producer.events.REQUEST_TIMEOUT, producer.events.REQUEST_QUEUE_SIZE',
    )
  })
})

describe('createInstrumentationEmitter', () => {
  it('delivers {id, type, timestamp, payload} with increasing ids, and removes listeners', () => {
    const emitter = createInstrumentationEmitter(consumerEvents)
    const seen: Array<{ id: number | string; type: string; timestamp: number; payload: unknown }> = []
    const remove = emitter.on(consumerEvents.GROUP_JOIN, (e) => {
      seen.push(e)
    })
    const before = Date.now()
    emitter.emit(consumerEvents.GROUP_JOIN, { groupId: 'g' })
    emitter.emit(consumerEvents.HEARTBEAT, { groupId: 'g' }) // no listener: not delivered
    emitter.emit(consumerEvents.GROUP_JOIN, { groupId: 'h' })
    expect(seen.map((e) => [e.type, e.payload])).toEqual([
      ['consumer.group_join', { groupId: 'g' }],
      ['consumer.group_join', { groupId: 'h' }],
    ])
    expect(Number(seen[1]!.id)).toBe(Number(seen[0]!.id) + 1)
    expect(seen[0]!.timestamp).toBeGreaterThanOrEqual(before)
    remove()
    emitter.emit(consumerEvents.GROUP_JOIN, {})
    expect(seen).toHaveLength(2)
    expect(emitter.listenerCount(consumerEvents.GROUP_JOIN)).toBe(0)
  })

  it('logs and swallows listener failures, sync or async, and still calls the other listeners', async () => {
    const error = vi.fn()
    const emitter = createInstrumentationEmitter(producerEvents, { logger: { error } })
    const other = vi.fn()
    emitter.on(producerEvents.CONNECT, () => {
      throw new Error('sync boom')
    })
    emitter.on(producerEvents.CONNECT, async () => {
      throw new Error('async boom')
    })
    emitter.on(producerEvents.CONNECT, other)
    expect(() => emitter.emit(producerEvents.CONNECT, null)).not.toThrow()
    expect(other).toHaveBeenCalledTimes(1)
    await new Promise((r) => setImmediate(r))
    expect(error.mock.calls.map((c) => c[0])).toEqual(['Failed to execute listener: sync boom', 'Failed to execute listener: async boom'])
    expect(error.mock.calls[0]![1]).toMatchObject({ eventName: 'producer.connect' })
  })
})
