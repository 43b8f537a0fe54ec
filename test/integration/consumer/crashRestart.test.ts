// A consumer that crashed with a retriable error restarts (KafkaJS's CRASH with restart: true); when the restart
// itself meets an unreachable server, that is retriable too and the consumer restarts again instead of dying for good.
import { describe, expect, it } from 'vitest'
import { waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'
import { startCuttingProxy } from '../../helpers/tcpProxy.js'

const t = useTestKafka('crash_restart')

describe('consumer restart after a crash', () => {
  it('restarts again when the restart cannot reach the server', async () => {
    const topic = await t.createTopic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'm' }] })

    const proxy = await startCuttingProxy(t.db.connectionString)
    const kafka = t.newKafka({ connectionString: proxy.connectionString })
    const consumer = kafka.consumer({ groupId: uniqueName('group'), maxWaitTimeInMs: 200, retry: { retries: 0, initialRetryTime: 100 } })
    const crashes: Array<{ restart: boolean; error: string }> = []
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      crashes.push({ restart: payload.restart, error: `${payload.error.name}: ${payload.error.message}` })
      // the server goes away as the restart (in 100 ms) begins: every connection cut, new ones refused for a while
      if (crashes.length === 1) proxy.blackout(600)
    })
    let calls = 0
    await consumer.connect()
    try {
      await consumer.subscribe({ topic, fromBeginning: true })
      await consumer.run({
        eachMessage: async () => {
          calls++
          if (calls === 1) throw new Error('the first attempt fails')
        },
      })
      await waitFor(() => calls >= 2 || crashes.some((c) => !c.restart), { timeout: 20_000 })
      // before: a crash of the restart itself had restart: false ("restart: read ECONNRESET", a KafkaJSConnectionError
      // whose cause is node-postgres's error): the consumer was gone and the message never handled again
      expect(crashes.length).toBeGreaterThanOrEqual(1)
      expect(crashes).toEqual(crashes.map((c) => ({ ...c, restart: true })))
    } finally {
      await consumer.disconnect()
    }
  })
})
