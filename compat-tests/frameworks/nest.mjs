// A NestJS microservice written as NestJS's docs write it — a Kafka server with a request/reply handler and an
// event handler, and a ClientKafka calling it — with no line that knows about PostgreSQL. NestJS loads `kafkajs`
// itself (dynamic import and createRequire); the register hook decides which one it gets.
// Prints one JSON line: { kafka: <which package>, replies, events }.
import 'reflect-metadata'
import { Controller, Module } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import { ClientKafka, EventPattern, MessagePattern, Payload, Transport } from '@nestjs/microservices'
import { lastValueFrom } from 'rxjs'
import { brokers, deadline, reportWhich, runId } from './support.cjs'

const sumTopic = `${runId}.math.sum`
const createdTopic = `${runId}.order.created`
const events = []

// Decorators applied by hand (this file is plain JavaScript, run by node without a compiler).
class MathController {
  sum(data) {
    return data.numbers.reduce((a, b) => a + b, 0)
  }
  created(data) {
    events.push(data.id)
  }
}
function decorateMethod(target, name, decorators, params = []) {
  let descriptor = Object.getOwnPropertyDescriptor(target.prototype, name)
  for (const decorator of decorators) descriptor = decorator(target.prototype, name, descriptor) ?? descriptor
  params.forEach((decorator, index) => decorator(target.prototype, name, index))
  Object.defineProperty(target.prototype, name, descriptor)
}
decorateMethod(MathController, 'sum', [MessagePattern(sumTopic)], [Payload()])
decorateMethod(MathController, 'created', [EventPattern(createdTopic)], [Payload()])
Controller()(MathController)
class AppModule {}
Module({ controllers: [MathController] })(AppModule)

const server = await NestFactory.createMicroservice(AppModule, {
  transport: Transport.KAFKA,
  options: {
    client: { clientId: 'math-server', brokers },
    consumer: { groupId: `${runId}-math`, sessionTimeout: 6000, heartbeatInterval: 500 },
    subscribe: { fromBeginning: true },
  },
  logger: ['error'],
})
await server.listen()

// Two client instances in one consumer group, as two replicas of a service would be: NestJS's reply-partition
// assigner gives each its own partition of the reply topic, and each must get exactly its own replies.
async function connectClient() {
  const client = new ClientKafka({
    client: { clientId: 'math-client', brokers },
    consumer: { groupId: `${runId}-math-client`, sessionTimeout: 6000, heartbeatInterval: 500 },
    subscribe: { fromBeginning: true },
  })
  client.subscribeToResponseOf(sumTopic)
  await client.connect()
  return client
}
const clients = [await connectClient(), await connectClient()]
// A ClientKafka learns its reply partition from GROUP_JOIN (through its partition assigner); until then send()
// throws InvalidKafkaClientTopicException. Both must hold a partition of their own.
const replyPartitions = () => clients.map((c) => c.getConsumerAssignments()[`${sumTopic}.reply`])
await deadline('a reply partition for each client', () => {
  const [a, b] = replyPartitions()
  return a !== undefined && b !== undefined && a !== b
})

const requests = clients.flatMap((client, i) => [1, 2, 3].map((n) => lastValueFrom(client.send(sumTopic, { numbers: [i * 100, n] }))))
const replies = await Promise.all(requests)
await lastValueFrom(clients[0].emit(createdTopic, { id: 'order-1' }))
await deadline('event handled', () => events.includes('order-1'))

for (const client of clients) await client.close()
await server.close()
reportWhich({ replies, events })
