// With the server unreachable, every entry point that connects fails with KafkaJS's retriable connection error, as
// KafkaJS's connect() does when no broker answers: the clients' connect() and kafka.database() (the dead-letter
// extension's, the ops tooling's) alike.
import net from 'node:net'
import { describe, expect, it } from 'vitest'
import { Kafka } from '../../../src/kafka.js'
import { KafkaJSConnectionError } from '../../../src/kafkajs/errors.js'
import { logLevel } from '../../../src/kafkajs/logger.js'

async function closedPortUrl(): Promise<string> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return `postgres://postgres@127.0.0.1:${port}/test`
}

describe('an unreachable server', () => {
  it('producer.connect() and kafka.database() reject with a retriable KafkaJSConnectionError', async () => {
    const kafka = new Kafka({
      clientId: 'unreachable',
      logLevel: logLevel.NOTHING,
      pgqueue: { connectionString: await closedPortUrl(), enabled: false, pool: { connectionTimeoutMillis: 1000 } },
    })
    const fromConnect = await kafka
      .producer()
      .connect()
      .catch((e: unknown) => e)
    // before: kafka.database() rejected with node-postgres's own Error (ECONNREFUSED), no KafkaJS class, no retriable
    const fromDatabase = await kafka.database().catch((e: unknown) => e)
    for (const e of [fromConnect, fromDatabase]) {
      expect(e).toBeInstanceOf(KafkaJSConnectionError)
      expect((e as KafkaJSConnectionError).retriable).toBe(true)
    }
  })
})
