import type { Consumer } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { consumerEvents, createInstrumentationEmitter } from '../../../src/kafkajs/instrumentation.js'
import { ConsumerRegistry, consumerRegistryFor } from '../../../src/ops/consumerRegistry.js'

function fakeConsumer() {
  const emitter = createInstrumentationEmitter(consumerEvents, { clientName: 'consumer' })
  const consumer = { events: consumerEvents, on: emitter.on } as unknown as Consumer
  return { consumer, emit: emitter.emit }
}

const join = (groupId: string) => ({ groupId, memberId: 'm', leaderId: 'm', isLeader: true, memberAssignment: {}, groupProtocol: 'x', duration: 1 })

describe('ConsumerRegistry', () => {
  it('counts a consumer from its join until it stops', () => {
    const registry = new ConsumerRegistry()
    const { consumer, emit } = fakeConsumer()
    const untrack = registry.track(consumer)
    expect(registry.track(consumer)).toBe(untrack) // tracked once, however often it is reported
    expect(registry.snapshot()).toEqual({ running: 0, crashed: 0, allAlive: true, consumers: [] })
    emit(consumerEvents.GROUP_JOIN, join('g1'))
    emit(consumerEvents.FETCH_START, { nodeId: 'x' })
    const running = registry.snapshot()
    expect(running).toMatchObject({ running: 1, crashed: 0, allAlive: true })
    expect(running.consumers[0]).toMatchObject({ groupId: 'g1', state: 'running', lastPollAt: expect.any(Number), error: null })
    emit(consumerEvents.STOP)
    expect(registry.snapshot().running).toBe(0)
  })

  it('a crash without restart is not alive, whether it is reported before (pgQueue) or after (KafkaJS) the disconnect', () => {
    const registry = new ConsumerRegistry()
    const pg = fakeConsumer()
    const kafka = fakeConsumer()
    registry.track(pg.consumer)
    registry.track(kafka.consumer)
    for (const c of [pg, kafka]) c.emit(consumerEvents.GROUP_JOIN, join('g'))

    pg.emit(consumerEvents.CRASH, { error: new Error('pg broke'), groupId: 'g', restart: false })
    kafka.emit(consumerEvents.STOP)
    kafka.emit(consumerEvents.DISCONNECT)
    kafka.emit(consumerEvents.CRASH, { error: new Error('kafka broke'), groupId: 'g', restart: false })
    const snapshot = registry.snapshot()
    expect(snapshot).toMatchObject({ running: 0, crashed: 2, allAlive: false })
    expect(snapshot.consumers.map((c) => c.error).sort()).toEqual(['kafka broke', 'pg broke'])

    // the owner disconnects the broken one: it no longer counts
    pg.emit(consumerEvents.DISCONNECT)
    expect(registry.snapshot()).toMatchObject({ crashed: 1 })
    // the other one is run again
    kafka.emit(consumerEvents.GROUP_JOIN, join('g'))
    expect(registry.snapshot()).toMatchObject({ running: 1, crashed: 0, allAlive: true })
  })

  it('a consumer restarting after a retriable crash stays alive', () => {
    const registry = new ConsumerRegistry()
    const { consumer, emit } = fakeConsumer()
    registry.track(consumer)
    emit(consumerEvents.GROUP_JOIN, join('g'))
    emit(consumerEvents.CRASH, { error: new Error('lost connection'), groupId: 'g', restart: true })
    expect(registry.snapshot()).toMatchObject({ running: 1, allAlive: true, consumers: [{ state: 'restarting', error: 'lost connection' }] })
  })

  it('untrack and clearCrashed forget consumers; registries are per owner', () => {
    const registry = new ConsumerRegistry()
    const a = fakeConsumer()
    const b = fakeConsumer()
    const untrack = registry.track(a.consumer)
    registry.track(b.consumer)
    a.emit(consumerEvents.GROUP_JOIN, join('g'))
    b.emit(consumerEvents.CRASH, { error: new Error('x'), groupId: 'g', restart: false })
    untrack()
    a.emit(consumerEvents.GROUP_JOIN, join('g'))
    expect(registry.snapshot()).toMatchObject({ running: 0, crashed: 1 })
    registry.clearCrashed()
    expect(registry.snapshot().consumers).toEqual([])

    const owner = {}
    expect(consumerRegistryFor(owner)).toBe(consumerRegistryFor(owner))
    expect(consumerRegistryFor(owner)).not.toBe(consumerRegistryFor({}))
  })
})
