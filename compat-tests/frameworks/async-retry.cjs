// kafkajs-async-retry used as its README shows (CommonJS): a handler that fails on its first attempt sends the
// message to the retry topic; the retry succeeds. The helper package itself does require('kafkajs').
// Prints one JSON line: { kafka: <which package>, attempts }.
const { Kafka } = require('kafkajs')
const AsyncRetryHelper = require('kafkajs-async-retry').default
const { RetryTopicNaming } = require('kafkajs-async-retry')
const { brokers, deadline, reportWhich, runId } = require('./support.cjs')

async function main() {
  const groupId = `${runId}-retry-group`
  const topic = `${runId}-orders`
  const kafka = new Kafka({ clientId: 'async-retry', brokers, logLevel: 1 })
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ waitForLeaders: true, topics: [topic, `${groupId}-retry-1`, `${groupId}-dlq`].map((t) => ({ topic: t })) })
  await admin.disconnect()

  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId, sessionTimeout: 6000, heartbeatInterval: 500, maxWaitTimeInMs: 200 })
  await producer.connect()
  await consumer.connect()
  const helper = new AsyncRetryHelper({ producer, groupId, retryTopicNaming: RetryTopicNaming.ATTEMPT_BASED, retryDelays: [1], maxRetries: 1 })
  await consumer.subscribe({ topics: [topic, helper.retryTopicPattern], fromBeginning: true })

  const attempts = []
  await consumer.run({
    eachMessage: helper.eachMessage(async ({ message, previousAttempts, originalTopic }) => {
      attempts.push({ value: message.value.toString(), previousAttempts, originalTopic })
      if (previousAttempts === 0) throw new Error('first attempt fails')
    }),
  })
  await producer.send({ topic, messages: [{ key: 'k', value: 'order-1' }] })
  await deadline('retried message handled', () => attempts.some((a) => a.previousAttempts === 1))

  await consumer.disconnect()
  await producer.disconnect()
  reportWhich({ attempts })
}
main().catch((e) => {
  console.error(e)
  process.exit(1)
})
