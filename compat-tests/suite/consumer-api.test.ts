import kafkajs from 'kafkajs'
import { describe, expect } from 'vitest'
import { contract } from '../harness.js'

const { KafkaJSNonRetriableError } = kafkajs
const NOT_RUNNING = 'Consumer group was not initialized, consumer#run must be called first'

/** Runs `fn` and returns what it threw (sync or async). */
async function thrown(fn: () => unknown): Promise<Error> {
  try {
    await fn()
  } catch (e) {
    return e as Error
  }
  throw new Error('expected an error, got none')
}

describe('consumer: API validation', () => {
  contract('a consumer without groupId is rejected', async (t) => {
    const kafka = await t.kafka()
    const err = await thrown(() => kafka.consumer({ groupId: '' }))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('Consumer groupId must be a non-empty string.')
  })

  contract('subscribe without topics is rejected', async (t) => {
    const consumer = await t.consumer()
    const err = await thrown(() => consumer.subscribe({} as never))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('Missing required argument "topics"')
  })

  contract('subscribe with a non-array topics is rejected', async (t) => {
    const consumer = await t.consumer()
    const err = await thrown(() => consumer.subscribe({ topics: 'x' as never }))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('Argument "topics" must be an array')
  })

  contract('subscribe with a topic that is neither string nor RegExp is rejected', async (t) => {
    const consumer = await t.consumer()
    const err = await thrown(() => consumer.subscribe({ topics: [42 as never] }))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('Invalid topic 42 (number), the topic name has to be a String or a RegExp')
  })

  contract('subscribe after run is rejected', async (t) => {
    const topic = await t.topic(1)
    const consumer = await t.consumer()
    await consumer.subscribe({ topic })
    await consumer.run({ eachMessage: async () => {} })
    const err = await thrown(() => consumer.subscribe({ topic }))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('Cannot subscribe to topic while consumer is running')
  })

  contract('seek before run is rejected', async (t) => {
    const topic = await t.topic(1)
    const consumer = await t.consumer()
    await consumer.subscribe({ topic })
    const err = await thrown(() => consumer.seek({ topic, partition: 0, offset: '0' }))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe(NOT_RUNNING)
  })

  contract('pause and resume before run are rejected; paused() is empty', async (t) => {
    const topic = await t.topic(1)
    const consumer = await t.consumer()
    await consumer.subscribe({ topic })
    expect(consumer.paused()).toEqual([])
    for (const call of [() => consumer.pause([{ topic }]), () => consumer.resume([{ topic }])]) {
      const err = await thrown(call)
      expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
      expect(err.message).toBe(NOT_RUNNING)
    }
  })

  contract('commitOffsets before run is rejected', async (t) => {
    const topic = await t.topic(1)
    const consumer = await t.consumer()
    await consumer.subscribe({ topic })
    const err = await thrown(() => consumer.commitOffsets([{ topic, partition: 0, offset: '1' }]))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe(NOT_RUNNING)
  })

  contract('seek validates the offset', async (t) => {
    const topic = await t.topic(1)
    const consumer = await t.consumer()
    await consumer.subscribe({ topic })
    await consumer.run({ eachMessage: async () => {} })
    const negative = await thrown(() => consumer.seek({ topic, partition: 0, offset: '-5' }))
    expect(negative).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(negative.message).toBe('Offset must not be a negative number')
    const notALong = await thrown(() => consumer.seek({ topic, partition: 0, offset: 'abc' }))
    expect(notALong.message).toBe('Invalid offset, expected a long received abc')
  })

  contract('pause validates its partitions argument', async (t) => {
    const topic = await t.topic(1)
    const consumer = await t.consumer()
    await consumer.subscribe({ topic })
    await consumer.run({ eachMessage: async () => {} })
    const err = await thrown(() => consumer.pause([{ topic, partitions: 'all' as never }]))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('Array of valid partitions required to pause specific partitions instead of all')
  })

  contract('events use the KafkaJS names and on() rejects unknown ones', async (t) => {
    const consumer = await t.consumer()
    expect(consumer.events).toMatchObject({
      GROUP_JOIN: 'consumer.group_join',
      COMMIT_OFFSETS: 'consumer.commit_offsets',
      END_BATCH_PROCESS: 'consumer.end_batch_process',
      CRASH: 'consumer.crash',
      FETCH: 'consumer.fetch',
      STOP: 'consumer.stop',
    })
    const err = await thrown(() => consumer.on('consumer.nope' as never, () => {}))
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toMatch(/^Event name should be one of /)
    const remove = consumer.on(consumer.events.STOP, () => {})
    expect(typeof remove).toBe('function')
  })
})
