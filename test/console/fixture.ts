// A real schema with what every console page shows: a keyed JSON topic, an Avro topic with two registered schema
// versions, a group that consumed and left (its offsets can be reset), and a group with a running member.
import type { Admin, Consumer } from 'kafkajs'
import { Kafka } from '../../src/kafka.js'
import { logLevel } from '../../src/kafkajs/exports.js'
import { createAvroCodec } from '../../src/registry/avroCodec.js'
import { PgSchemaRegistry } from '../../src/registry/registry.js'
import { deferred } from '../helpers/db.js'
import { uniqueName, type TestKafka } from '../helpers/kafka.js'

export interface ConsoleFixture {
  orders: string
  users: string
  subject: string
  schemaId: number
  /** consumed everything from `orders`, then stopped: Empty, offsets at the high watermarks */
  idleGroup: string
  /** a running consumer of `users` */
  liveGroup: string
  liveClientId: string
  admin: Admin
  close(): Promise<void>
}

const USER_V1 = { type: 'record', name: 'User', namespace: 'console.test', fields: [{ name: 'name', type: 'string' }] }
const USER_V2 = { ...USER_V1, fields: [...USER_V1.fields, { name: 'age', type: 'int', default: 0 }] }

export async function seedConsole(t: TestKafka): Promise<ConsoleFixture> {
  const admin = t.kafka.admin()
  await admin.connect()
  const orders = await t.createTopic(3, 'orders')
  const users = await t.createTopic(1, 'users')
  const producer = await t.producer()
  await producer.send({
    topic: orders,
    messages: Array.from({ length: 30 }, (_, i) => ({
      key: `k${i % 10}`,
      value: JSON.stringify({ order: i, amount: i * 10 }),
      headers: { source: 'console-test' },
    })),
  })

  const registry = await PgSchemaRegistry.open({ kafka: t.kafka })
  const subject = `${users}-value`
  await registry.register(subject, { schema: JSON.stringify(USER_V1) })
  const { id: schemaId } = await registry.register(subject, { schema: JSON.stringify(USER_V2) })
  const codec = createAvroCodec(registry)
  const ada = await codec.encode(schemaId, { name: 'ada', age: 36 })
  await producer.send({
    topic: users,
    messages: [
      { key: 'ada', value: ada },
      { key: 'raw', value: Buffer.from([0xff, 0x00, 0x01, 0xfe]) },
    ],
  })

  const idleGroup = uniqueName('billing')
  const idle = await t.consumer({ groupId: idleGroup })
  const all = deferred()
  let seen = 0
  await idle.subscribe({ topic: orders, fromBeginning: true })
  await idle.run({ eachMessage: async () => void (++seen === 30 && all.resolve()) })
  await all.promise
  await idle.disconnect() // commits and leaves: the group is Empty

  const liveGroup = uniqueName('mailer')
  const liveClientId = 'mailer-app'
  const liveKafka = new Kafka({ clientId: liveClientId, logLevel: logLevel.NOTHING, pgqueue: t.db.options })
  const live: Consumer = liveKafka.consumer({ groupId: liveGroup, sessionTimeout: 6000, heartbeatInterval: 500, maxWaitTimeInMs: 500 })
  await live.connect()
  await live.subscribe({ topic: users, fromBeginning: true })
  const joined = deferred()
  live.on(live.events.GROUP_JOIN, () => joined.resolve())
  await live.run({ eachMessage: async () => {} })
  await joined.promise
  return {
    orders,
    users,
    subject,
    schemaId,
    idleGroup,
    liveGroup,
    liveClientId,
    admin,
    async close() {
      await live.disconnect()
      await registry.close()
      await admin.disconnect()
    },
  }
}
