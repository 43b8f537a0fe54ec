// Shared by the framework fixtures: where the broker is, a run id for unique names, waiting with a deadline, and
// the one JSON line each fixture prints (which `kafkajs` this process got, and what happened).
const brokers = (process.env.KAFKA_BROKERS || '127.0.0.1:9092').split(',')
const runId = process.env.FIXTURE_RUN_ID || `run${process.pid}`

/** Resolves once `check()` is true; rejects after `ms` naming what never happened. */
async function deadline(what, check, ms = 45_000) {
  const until = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for: ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** `kafkajs` as an application module sees it: this package answers with createKafka, the real one does not. */
function whichKafkajs() {
  return typeof require('kafkajs').createKafka === 'function' ? 'kafkajs-pgqueue' : 'kafkajs'
}

function reportWhich(result) {
  console.log(JSON.stringify({ kafka: whichKafkajs(), ...result }))
}

/** Produce one message and consume it back with the given Kafka class; returns the value received. */
async function roundTrip(Kafka) {
  const topic = `${runId}-indirect`
  const kafka = new Kafka({ clientId: 'indirect', brokers, logLevel: 1 })
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic }] })
  await admin.disconnect()
  const producer = kafka.producer()
  await producer.connect()
  await producer.send({ topic, messages: [{ key: 'k', value: 'hello' }] })
  await producer.disconnect()
  const consumer = kafka.consumer({ groupId: `${runId}-indirect`, sessionTimeout: 6000, heartbeatInterval: 500, maxWaitTimeInMs: 200 })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  const received = []
  await consumer.run({ eachMessage: async ({ message }) => void received.push(message.value.toString()) })
  await deadline('message consumed', () => received.length > 0)
  await consumer.disconnect()
  return received
}

module.exports = { brokers, runId, deadline, reportWhich, roundTrip }
