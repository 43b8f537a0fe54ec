import type { Consumer, Producer, ProducerRecord, Transaction } from 'kafkajs'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { consumerEvents, createInstrumentationEmitter } from '../../../src/kafkajs/instrumentation.js'
import { OBSERVE_BATCHES, type BatchObserver } from '../../../src/ops/hooks.js'
import { attachConsumerMetrics, attachProducerMetrics } from '../../../src/ops/instrument.js'
import type { MaintenanceReport } from '../../../src/maintenance/run.js'
import { createMetrics } from '../../../src/ops/metrics.js'

async function values(registry: Registry, name: string) {
  const metric = registry.getSingleMetric(name)
  if (!metric) throw new Error(`no metric ${name}`)
  // histograms name each series (_bucket, _sum, _count); prom-client's type leaves metricName out
  return (await metric.get()).values as Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>
}

function fakeConsumer(withObserver = false) {
  const emitter = createInstrumentationEmitter(consumerEvents, { clientName: 'consumer' })
  const observers = new Set<BatchObserver>()
  const consumer = { events: consumerEvents, on: emitter.on } as unknown as Consumer & Record<symbol, unknown>
  if (withObserver) {
    consumer[OBSERVE_BATCHES] = (o: BatchObserver) => {
      observers.add(o)
      return () => observers.delete(o)
    }
  }
  return { consumer, emit: emitter.emit, observers }
}

const endBatch = (topic: string, batchSize: number, duration: number) => ({
  topic,
  partition: 0,
  highWatermark: '10',
  offsetLag: '0',
  offsetLagLow: '0',
  batchSize,
  firstOffset: '0',
  lastOffset: '1',
  duration,
})

describe('consumer metrics', () => {
  it('counts handled messages and handler time per topic and group (from KafkaJS events)', async () => {
    const metrics = createMetrics()
    const { consumer, emit } = fakeConsumer()
    const detach = attachConsumerMetrics(consumer, metrics, { groupId: 'configured' })
    emit(consumerEvents.END_BATCH_PROCESS, endBatch('t', 3, 250))
    emit(consumerEvents.GROUP_JOIN, {
      groupId: 'joined',
      memberId: 'm',
      leaderId: 'm',
      isLeader: true,
      memberAssignment: {},
      groupProtocol: 'x',
      duration: 1,
    })
    emit(consumerEvents.END_BATCH_PROCESS, endBatch('t', 2, 50))
    emit(consumerEvents.CRASH, { error: new Error('x'), groupId: 'joined', restart: true })
    detach()
    emit(consumerEvents.END_BATCH_PROCESS, endBatch('t', 100, 1))

    const consumed = await values(metrics.registry, 'messaging_client_consumed_messages_total')
    expect(consumed.map((v) => [v.labels.consumer_group, v.value])).toEqual([
      ['configured', 3],
      ['joined', 2],
    ])
    expect(consumed[0]!.labels).toEqual({ messaging_system: 'pgqueue', topic: 't', consumer_group: 'configured' })
    const sums = (await values(metrics.registry, 'messaging_process_duration_seconds')).filter((v) => v.metricName?.endsWith('_sum'))
    expect(sums.map((v) => v.value)).toEqual([0.25, 0.05])
    expect((await values(metrics.registry, 'messaging_consumer_crashes_total'))[0]).toMatchObject({
      labels: { consumer_group: 'joined', restart: 'true' },
      value: 1,
    })
  })

  it('records enqueue-to-handler time per message and priority band when the consumer reports batches', async () => {
    const metrics = createMetrics(undefined, { messagingSystem: 'pgqueue' })
    const { consumer, observers } = fakeConsumer(true)
    const detach = attachConsumerMetrics(consumer, metrics)
    expect(observers.size).toBe(1)
    for (const o of observers) {
      o({
        topic: 't',
        partition: 0,
        groupId: 'g',
        count: 3,
        durationMs: 5,
        startedAt: 10_000,
        enqueueTimestamps: [9_000, 7_500, 10_200], // the last: database clock ahead of ours
        priorities: [0, 5, 5],
        bands: [0, 1, 1],
      })
    }
    const series = (await values(metrics.registry, 'messaging_queue_time_seconds')).filter(
      (v) => v.metricName?.endsWith('_sum') || v.metricName?.endsWith('_count'),
    )
    const byBand = (band: string, suffix: string) => series.find((v) => v.labels.messaging_priority === band && v.metricName!.endsWith(suffix))!.value
    expect(byBand('0', '_sum')).toBe(1)
    expect(byBand('1', '_sum')).toBe(2.5)
    expect(byBand('1', '_count')).toBe(2)
    expect(series[0]!.labels).toMatchObject({ messaging_system: 'pgqueue', topic: 't', consumer_group: 'g' })
    detach()
    expect(observers.size).toBe(0)
  })
})

describe('producer metrics', () => {
  function fakeProducer(fail = false) {
    const tx = {
      send: async () => [],
      sendBatch: async () => [],
      commit: async () => {},
      abort: async () => {},
    } as unknown as Transaction
    const producer = {
      send: async (r: ProducerRecord) => {
        if (fail) throw new Error('down')
        return [{ topicName: r.topic, partition: 0, errorCode: 0 }]
      },
      sendBatch: async () => [],
      transaction: async () => ({ ...tx }),
    } as unknown as Producer
    return producer
  }

  it('counts sends and batch sends per topic, failures apart, and restores the producer on detach', async () => {
    const metrics = createMetrics()
    const producer = fakeProducer()
    const original = producer.send
    const detach = attachProducerMetrics(producer, metrics)
    await producer.send({ topic: 'a', messages: [{ value: '1' }, { value: '2' }] })
    await producer.sendBatch({
      topicMessages: [
        { topic: 'a', messages: [{ value: '3' }] },
        { topic: 'b', messages: [{ value: '4' }] },
      ],
    })
    detach()
    expect(producer.send).toBe(original)
    await producer.send({ topic: 'a', messages: [{ value: 'not counted' }] })
    const sent = await values(metrics.registry, 'messaging_client_sent_messages_total')
    expect(sent.map((v) => [v.labels.topic, v.value])).toEqual([
      ['a', 3],
      ['b', 1],
    ])

    const failing = fakeProducer(true)
    attachProducerMetrics(failing, metrics)
    await expect(failing.send({ topic: 'c', messages: [{ value: 'x' }] })).rejects.toThrow('down')
    expect((await values(metrics.registry, 'messaging_client_send_errors_total'))[0]).toMatchObject({ labels: { topic: 'c' }, value: 1 })
  })

  it('counts a transaction’s messages when it commits, never when it aborts', async () => {
    const metrics = createMetrics()
    const producer = fakeProducer()
    attachProducerMetrics(producer, metrics)
    const aborted = await producer.transaction()
    await aborted.send({ topic: 'tx', messages: [{ value: '1' }] })
    await aborted.abort()
    const committed = await producer.transaction()
    await committed.send({ topic: 'tx', messages: [{ value: '1' }, { value: '2' }] })
    expect(await values(metrics.registry, 'messaging_client_sent_messages_total')).toEqual([])
    await committed.commit()
    expect((await values(metrics.registry, 'messaging_client_sent_messages_total'))[0]).toMatchObject({ labels: { topic: 'tx' }, value: 2 })
  })
})

describe('lag and maintenance metrics', () => {
  it('reads lag gauges from the source on every scrape, once per scrape', async () => {
    const metrics = createMetrics()
    let calls = 0
    let fail = false
    metrics.setLagSource(async () => {
      calls++
      if (fail) throw new Error('database down')
      return [{ group: 'g', topics: [{ topic: 't', totalLag: '7', maxLag: '5', partitionCount: 2, stuckAhead: 1 }] }]
    })
    const text = await metrics.registry.metrics()
    expect(calls).toBe(1)
    expect(text).toContain('messaging_consumer_lag{messaging_system="pgqueue",consumer_group="g",topic="t"} 7')
    expect(text).toContain('messaging_consumer_stuck_ahead_partitions{messaging_system="pgqueue",consumer_group="g",topic="t"} 1')
    expect(text).toContain('messaging_consumer_lag_collection_success 1')
    fail = true
    const failed = await metrics.registry.metrics()
    expect(failed).not.toContain('messaging_consumer_lag{')
    expect(failed).toContain('messaging_consumer_lag_collection_success 0')
  })

  it('counts maintenance runs by outcome and deletions per policy', async () => {
    const metrics = createMetrics()
    const completed = {
      skipped: false,
      startedAt: new Date(),
      durationMs: 1500,
      partitions: { dropped: ['p1', 'p2'], kept: [], busy: [] },
      deleted: { age: 10, rowCap: 2, byteCap: 0, aggressive: 5 },
      errors: [],
    } as unknown as MaintenanceReport
    metrics.recordMaintenance(completed)
    metrics.recordMaintenance({ ...completed, errors: [{ step: 'vacuum', message: 'x' }] } as MaintenanceReport)
    metrics.recordMaintenance({ skipped: true, startedAt: new Date() })
    const runs = await values(metrics.registry, 'pgqueue_maintenance_runs_total')
    expect(Object.fromEntries(runs.map((v) => [v.labels.outcome, v.value]))).toEqual({ completed: 1, failed: 1, skipped: 1 })
    const deleted = await values(metrics.registry, 'pgqueue_maintenance_deleted_messages_total')
    expect(Object.fromEntries(deleted.map((v) => [v.labels.policy, v.value]))).toEqual({ age: 20, row_cap: 4, byte_cap: 0, aggressive: 10 })
    expect((await values(metrics.registry, 'pgqueue_maintenance_partitions_dropped_total'))[0]!.value).toBe(4)
  })

  it('two metric sets never share a registry unless asked to', () => {
    expect(() => {
      createMetrics()
      createMetrics()
    }).not.toThrow()
    const shared = new Registry()
    createMetrics(shared)
    expect(() => createMetrics(shared)).toThrow(/already been registered/)
  })
})
