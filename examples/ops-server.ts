// The operations API next to an application: GET /health, GET /metrics (Prometheus) and DataHub's messaging
// endpoints (lag, registrations, offset reset), with the app's producer and consumer instrumented. It runs a short
// scenario and exits; pass --keep-running to leave the server up and explore it with curl.
//
//   npx tsx examples/ops-server.ts --keep-running
//   curl -s localhost:9464/health
//   curl -s 'localhost:9464/openapi/operations/messaging/consumer/lag?detailed=true'
//
// transports: pgqueue kafka
import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import { attachConsumerMetrics, attachProducerMetrics, createKafka, Kafka, logLevel, startOpsServer, trackConsumer } from 'kafkajs-pgqueue'

async function main(): Promise<void> {
  const keepRunning = process.argv.includes('--keep-running')
  // unset means kafka for createKafka; this example falls back to pgqueue so it runs without a broker
  const env = { ...process.env, DATAHUB_MESSAGING_TRANSPORT: process.env.DATAHUB_MESSAGING_TRANSPORT ?? 'pgqueue' }
  const kafka = createKafka(
    {
      clientId: 'ops-example',
      brokers: (process.env.KAFKA_BROKERS ?? 'localhost:9092').split(','),
      logLevel: logLevel.WARN,
      pgqueue: { enabled: true },
    },
    env,
  )
  const pgqueue = kafka instanceof Kafka
  const server = await startOpsServer({ kafka, port: keepRunning ? 9464 : 0 })
  console.log(`operations API on ${server.url} (transport ${pgqueue ? 'pgqueue' : 'kafka'})`)

  const run = `${Date.now().toString(36)}-${process.pid}`
  const topic = `ops-orders-${run}`
  const groupId = `ops-example-${run}`
  const admin = kafka.admin()
  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId })
  // metrics land in the server's registry; the health check follows the consumer
  attachProducerMetrics(producer, server.handler.metrics)
  attachConsumerMetrics(consumer, server.handler.metrics, { groupId })
  trackConsumer(kafka, consumer, groupId)
  await Promise.all([admin.connect(), producer.connect(), consumer.connect()])
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] })
    await producer.send({ topic, messages: Array.from({ length: 6 }, (_, i) => ({ key: `k${i % 2}`, value: `order ${i}` })) })

    let received = 0
    let allReceived!: () => void
    const done = new Promise<void>((resolve) => (allReceived = resolve))
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({ eachMessage: async () => void (++received === 6 && allReceived()) })
    const timedOut = delay(15_000, undefined, { ref: false }).then(() => Promise.reject(new Error('timed out after 15 s waiting for six messages')))
    await Promise.race([done, timedOut])

    const health = await fetch(`${server.url}/health`)
    const report = (await health.json()) as { status: string; consumers: { running: number } }
    console.log(`GET /health -> ${health.status} ${report.status}, ${report.consumers.running} consumer(s) running`)
    assert.ok(health.status === 200 && report.consumers.running === 1, 'healthy with one running consumer')

    const metrics = await (await fetch(`${server.url}/metrics`)).text()
    const ours = metrics.split('\n').filter((l) => l.includes(topic) && !l.includes('_bucket'))
    console.log(`GET /metrics -> ${ours.length} series for ${topic}, e.g.\n  ${ours.slice(0, 3).join('\n  ')}`)
    assert.ok(
      ours.some((l) => l.startsWith('messaging_client_sent_messages_total') && l.endsWith(' 6')),
      'six messages sent',
    )

    if (pgqueue) {
      await consumer.stop() // commits what was consumed
      const lag = await fetch(`${server.url}/openapi/operations/messaging/consumer/lag?group=${groupId}&detailed=true`)
      const body = (await lag.json()) as { consumerGroups: Record<string, Record<string, { metrics: { totalLag: number } }>> }
      console.log(`GET /consumer/lag -> ${JSON.stringify(body.consumerGroups[groupId])}`)
      assert.ok(body.consumerGroups[groupId]?.[topic]?.metrics.totalLag === 0, 'the group caught up')
    }
    if (keepRunning) {
      console.log('serving until Ctrl-C')
      await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()))
    }
    console.log('ops-server: done')
  } finally {
    await Promise.all([consumer.disconnect(), producer.disconnect(), admin.disconnect()])
    await server.close()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
