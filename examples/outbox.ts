// The transactional outbox without an outbox table: the application writes its order row and publishes the
// OrderPlaced event in the SAME PostgreSQL transaction (producer.sendWith(client, record)). Commit, and both
// exist; roll back, and neither does — no dual write, no relay process, no "event sent for an order that was
// never saved". One of the three orders below is rolled back (payment declined) and is never delivered.
//
//   npx tsx examples/outbox.ts
//
// transports: pgqueue
import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import { Kafka, logLevel } from 'kafkajs-pgqueue'

async function main(): Promise<void> {
  const kafka = new Kafka({ clientId: 'outbox', logLevel: logLevel.WARN, pgqueue: { enabled: true } })
  // The application's transactions run on the database the queue uses (DATABASE_URL, DATAHUB_PGQUEUE_DATASOURCE_URL,
  // PG*, else the embedded server): kafka.database() hands out that pool. An application with its own pg pool on
  // the same database passes one of its own clients to sendWith just the same.
  const { pool, release } = await kafka.database()

  const run = `${Date.now().toString(36)}-${process.pid}`
  const topic = `order-events-${run}`
  const admin = kafka.admin()
  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId: `fulfilment-${run}` })
  await Promise.all([admin.connect(), producer.connect(), consumer.connect()])
  try {
    await pool.query('CREATE SCHEMA IF NOT EXISTS shop')
    await pool.query(`CREATE TABLE IF NOT EXISTS shop.orders (
      id text PRIMARY KEY, customer text NOT NULL, total_cents int NOT NULL, placed_at timestamptz NOT NULL DEFAULT now())`)
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] })

    /** The application's use case: one transaction for the row and the event. */
    async function placeOrder(order: { id: string; customer: string; totalCents: number }, paymentOk: boolean): Promise<boolean> {
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        await client.query('INSERT INTO shop.orders (id, customer, total_cents) VALUES ($1, $2, $3)', [order.id, order.customer, order.totalCents])
        await producer.sendWith(client, {
          topic,
          messages: [{ key: order.customer, value: JSON.stringify({ type: 'OrderPlaced', ...order }) }],
        })
        if (!paymentOk) throw new Error('payment declined') // anything failing after the send
        await client.query('COMMIT')
        return true
      } catch (err) {
        await client.query('ROLLBACK')
        console.log(`  order ${order.id} rolled back (${(err as Error).message}): no row, no event`)
        return false
      } finally {
        client.release()
      }
    }

    const orders = [
      { order: { id: `${run}-1`, customer: 'alice', totalCents: 4200 }, paymentOk: true },
      { order: { id: `${run}-2`, customer: 'bob', totalCents: 990 }, paymentOk: false },
      { order: { id: `${run}-3`, customer: 'carol', totalCents: 15000 }, paymentOk: true },
    ]
    const committed: string[] = []
    for (const { order, paymentOk } of orders) if (await placeOrder(order, paymentOk)) committed.push(order.id)
    console.log(`placed ${orders.length} orders, committed ${committed.length}`)

    const delivered: string[] = []
    let done!: () => void
    const allDelivered = new Promise<void>((resolve) => (done = resolve))
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ message }) => {
        const event = JSON.parse(message.value!.toString())
        console.log(`  fulfilment received ${event.type} ${event.id} for ${event.customer}`)
        delivered.push(event.id)
        if (delivered.length === committed.length) done()
      },
    })
    const timedOut = delay(15_000, undefined, { ref: false }).then(() =>
      Promise.reject(new Error(`timed out after 15 s waiting for ${committed.length} events`)),
    )
    await Promise.race([allDelivered, timedOut])
    await consumer.stop()

    const rows = await pool.query<{ id: string }>('SELECT id FROM shop.orders WHERE id LIKE $1 ORDER BY id', [`${run}-%`])
    assert.ok(rows.rows.map((r) => r.id).join() === committed.join(), `order rows ${rows.rows.map((r) => r.id).join()} = committed orders`)
    assert.ok([...delivered].sort().join() === committed.join(), `delivered ${delivered.join()} = committed orders`)
    // the rolled-back event was never written: the topic holds exactly the committed ones
    const stored = (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0)
    assert.ok(stored === committed.length, `topic holds ${stored} events, expected ${committed.length}`)
    console.log(`outbox: ${committed.length} orders committed and delivered, ${orders.length - committed.length} rolled back and never delivered`)
  } finally {
    await Promise.all([consumer.disconnect(), producer.disconnect(), admin.disconnect()])
    await release()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
