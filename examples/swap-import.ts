// An existing KafkaJS service moved to PostgreSQL by changing its import line, and nothing else:
//
//   -import { Kafka, logLevel, KafkaJSError, type EachMessagePayload } from 'kafkajs'
//   +import { Kafka, logLevel, KafkaJSError, type EachMessagePayload } from 'kafkajs-pgqueue'
//
// (inside this repository tsconfig.json's paths point 'kafkajs-pgqueue' at src/). `brokers` is ignored on PostgreSQL; the database
// comes from DATABASE_URL / DATAHUB_PGQUEUE_DATASOURCE_URL / PG*, else an embedded server starts. On your own
// server create the tables once with `npx kafkajs-pgqueue migrate`, or set DATAHUB_PGQUEUE_ENABLED=true.
//
//   npx tsx examples/swap-import.ts
//
// scripts/run-examples.ts also runs this file on a Kafka broker with the import line put back to 'kafkajs'.
// transports: pgqueue kafkajs
import { Kafka, logLevel, KafkaJSError, type EachMessagePayload } from 'kafkajs-pgqueue'

// ---------------------------------------------------------------------------------------------------------------
// The service, as it was written for KafkaJS: an order service publishes OrderPlaced events, the shipping worker
// (a consumer group) handles them, and SIGTERM shuts both down cleanly.
// ---------------------------------------------------------------------------------------------------------------

const kafka = new Kafka({
  clientId: 'order-service',
  brokers: (process.env.KAFKA_BROKERS ?? 'localhost:9092').split(','),
  logLevel: logLevel.WARN,
  retry: { initialRetryTime: 100, retries: 8 },
})

const run = `${Date.now().toString(36)}-${process.pid}` // unique names: the example's database outlives the run
const ORDERS_TOPIC = `order-events-${run}`
const SHIPPING_GROUP = `shipping-worker-${run}`

const admin = kafka.admin()
const producer = kafka.producer()
const consumer = kafka.consumer({ groupId: SHIPPING_GROUP, sessionTimeout: 30_000 })

interface OrderPlaced {
  type: 'OrderPlaced'
  orderId: string
  customerId: string
  items: number
}

const shipped = new Map<string, number>()

async function placeOrder(order: Omit<OrderPlaced, 'type'>): Promise<void> {
  const event: OrderPlaced = { type: 'OrderPlaced', ...order }
  await producer.send({
    topic: ORDERS_TOPIC,
    messages: [{ key: order.customerId, value: JSON.stringify(event), headers: { 'event-type': event.type } }],
  })
}

async function handleOrder({ message }: EachMessagePayload): Promise<void> {
  if (message.headers?.['event-type']?.toString() !== 'OrderPlaced') return
  const event = JSON.parse(message.value!.toString()) as OrderPlaced
  shipped.set(event.orderId, (shipped.get(event.orderId) ?? 0) + 1)
}

async function start(): Promise<void> {
  await admin.connect()
  await admin.createTopics({ topics: [{ topic: ORDERS_TOPIC, numPartitions: 3 }] })
  await producer.connect()
  await consumer.connect()
  await consumer.subscribe({ topics: [ORDERS_TOPIC], fromBeginning: true })
  consumer.on(consumer.events.CRASH, ({ payload }) => console.error('shipping worker crashed:', payload.error.message))
  await consumer.run({ partitionsConsumedConcurrently: 3, eachMessage: handleOrder })
}

async function shutdown(): Promise<void> {
  await consumer.disconnect()
  await producer.disconnect()
  await admin.disconnect()
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(
    signal,
    () =>
      void shutdown().then(
        () => process.exit(0),
        () => process.exit(1),
      ),
  )
}

// ---------------------------------------------------------------------------------------------------------------
// The example's driver: place orders, wait until the worker shipped each exactly once, shut down.
// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  try {
    await start()
    console.log(`order-service started: topic ${ORDERS_TOPIC}, group ${SHIPPING_GROUP}`)
    const orders = Array.from({ length: 20 }, (_, i) => ({ orderId: `o-${i}`, customerId: `c-${i % 5}`, items: 1 + (i % 3) }))
    for (const order of orders) await placeOrder(order)
    console.log(`placed ${orders.length} orders`)

    const deadline = Date.now() + 15_000
    while (shipped.size < orders.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    const twice = [...shipped].filter(([, n]) => n !== 1)
    if (shipped.size !== orders.length) throw new Error(`shipped ${shipped.size} of ${orders.length} orders`)
    if (twice.length > 0) throw new Error(`shipped more than once: ${twice.map(([id]) => id).join(', ')}`)
    console.log(`swap-import: ${shipped.size} of ${orders.length} orders shipped exactly once`)
  } catch (err) {
    if (err instanceof KafkaJSError) console.error(`KafkaJS error (retriable: ${err.retriable}):`, err.message)
    throw err
  } finally {
    await shutdown()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
