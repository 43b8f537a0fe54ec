// A CommonJS app: the require condition's types (index.d.ts).
import pgqueue = require('kafkajs-pgqueue')

const kafka = new pgqueue.Kafka({ clientId: 'app', brokers: [] })
export const admin: pgqueue.Admin = kafka.admin()
export function isOurs(e: unknown): boolean {
  return e instanceof pgqueue.KafkaJSError && e.retriable
}
