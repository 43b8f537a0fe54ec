// Idle consumers wake on NOTIFY, not on their poll timer; with LISTEN off they still poll.
import { describe, expect, it } from 'vitest'
import { deferred } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const listening = useTestKafka('wakeups_listen')
const polling = useTestKafka('wakeups_poll', { listen: false })

async function latencies(t: typeof listening, maxWaitTimeInMs: number, rounds: number): Promise<number[]> {
  const topic = uniqueName('wake')
  const producer = await t.producer()
  await producer.send({ topic, messages: [{ value: 'create the topic' }] })
  const consumer = await t.consumer({ maxWaitTimeInMs })
  await consumer.subscribe({ topic })
  const joined = deferred()
  consumer.on(consumer.events.GROUP_JOIN, () => joined.resolve())
  let arrived = deferred<number>()
  // an empty fetch: the consumer has nothing left and now waits for a notification or its poll timer
  let idle = deferred()
  consumer.on(consumer.events.FETCH, (e) => e.payload.numberOfBatches === 0 && idle.resolve())
  await consumer.run({ eachMessage: async () => arrived.resolve(Date.now()) })
  await joined.promise
  const out: number[] = []
  for (let i = 0; i < rounds; i++) {
    await idle.promise
    idle = deferred()
    arrived = deferred<number>()
    const sentAt = Date.now()
    await producer.send({ topic, messages: [{ value: `m${i}` }] })
    out.push((await arrived.promise) - sentAt)
  }
  return out
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

describe('wake-ups', () => {
  it('an idle consumer is woken by NOTIFY long before its poll timer', async () => {
    const ms = await latencies(listening, 20_000, 7)
    console.log(`LISTEN wake-up latency (ms): ${ms.join(', ')}; median ${median(ms)}`)
    // a 20 s poll timer could not deliver any of these: every one came from the notification
    expect(Math.max(...ms)).toBeLessThan(5_000)
  })

  it('with LISTEN disabled the consumer still receives by polling within maxWaitTimeInMs', async () => {
    const ms = await latencies(polling, 400, 3)
    console.log(`polling latency (ms): ${ms.join(', ')}`)
    expect(Math.max(...ms)).toBeLessThan(400 + 1_000)
  })
})
