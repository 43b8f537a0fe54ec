// An ES module app: the import condition's types (index.d.mts). Touches the pg-typed parts of the API.
import pgqueue, {
  Kafka,
  createKafka,
  KafkaJSError,
  logLevel,
  CompressionTypes,
  createRoles,
  runMaintenance,
  type EachMessagePayload,
  type Producer,
  type PgQueueOptions,
  type Queryable,
  type MaintenanceReport,
} from 'kafkajs-pgqueue'

const options: PgQueueOptions = { connectionString: 'postgres://localhost/app', schema: 'queue' }
const kafka = new Kafka({ clientId: 'app', brokers: [], logLevel: logLevel.ERROR, pgqueue: options })
const producer: Producer = kafka.producer()
const consumer = createKafka({ clientId: 'app', brokers: ['localhost:9092'] }).consumer({ groupId: 'g' })

export async function main(db: Queryable): Promise<MaintenanceReport | undefined> {
  await producer.send({ topic: 't', compression: CompressionTypes.None, messages: [{ key: 'k', value: 'v' }] })
  await consumer.run({
    eachMessage: async ({ message, partition }: EachMessagePayload) => {
      void [message.value?.toString(), partition]
    },
  })
  void [createRoles, db]
  if (pgqueue.Kafka !== Kafka) throw new KafkaJSError('two module instances')
  return typeof runMaintenance === 'function' ? undefined : undefined
}
