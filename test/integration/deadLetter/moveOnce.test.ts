// A message is moved (to its dead-letter topic, or to the retry topic of its next attempt) once, whatever fails after
// the move's COMMIT. Found by the randomized checker (`dead-letter-duplicate`, seed 31): the move committed, the
// handler path failed after it, the member rewound to its in-memory position and moved the message again. Before
// the fix each test here moved its message twice (or more); the move now marks the message in its own transaction
// (delivery_attempt.moved_at) and a message delivered again after a move whose outcome was not learned is looked up
// and resolved without the handler.
import type { EachBatchHandler, EachMessageHandler } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { deadLetter, type DeadLetterOptions } from '../../../src/deadLetter/index.js'
import { readDeadLetters } from '../../../src/deadLetter/browse.js'
import type { Kafka } from '../../../src/kafka.js'
import { KafkaJSError } from '../../../src/kafkajs/errors.js'
import type { AttemptKey } from '../../../src/store/deliveryAttempts.js'
import { claimMove, isDone } from '../../../src/store/deliveryAttempts.js'
import { commitOffsets } from '../../../src/store/offsets.js'
import { findTopics } from '../../../src/store/topics.js'
import { deferred } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('dl_move_once')
const FAST = { initialMs: 10, maxMs: 20, factor: 2, jitter: 0 }

/** `kafka` whose producers' transactions commit and then report the first `times` COMMITs as failed (the answer lost). */
function commitAnswerLost(kafka: Kafka, times = 1): Kafka {
  let left = times
  return new Proxy(kafka, {
    get(target, prop, receiver) {
      if (prop !== 'producer') return Reflect.get(target, prop, receiver)
      return (config: Parameters<Kafka['producer']>[0]) => {
        const producer = target.producer(config)
        const transaction = producer.transaction.bind(producer)
        producer.transaction = async () => {
          const tx = await transaction()
          return {
            ...tx,
            commit: async () => {
              await tx.commit()
              if (left-- > 0) throw new KafkaJSError('Connection terminated: the answer to COMMIT was lost', { retriable: true })
            },
          }
        }
        return producer
      }
    },
  })
}

/** Runs `values` through a wrapped handler of one group that fails on 'bad' every time; resolves once 'after' is handled. */
async function consumeThrough(
  kafka: Kafka,
  values: string[],
  options: Partial<DeadLetterOptions> & { batch?: boolean } = {},
): Promise<{ topic: string; groupId: string; calls: string[]; handled: string[]; disconnect: () => Promise<void> }> {
  const topic = await t.createTopic(1)
  const producer = await t.producer()
  await producer.send({ topic, messages: values.map((value) => ({ value })) })
  const groupId = uniqueName('g')
  const { batch, ...rest } = options
  const dl = deadLetter(kafka as never, { groupId, topic: `${topic}.dlq`, maxAttempts: 3, backoff: FAST, ...rest } as DeadLetterOptions)
  await dl.connect()
  const calls: string[] = []
  const handled: string[] = []
  const done = deferred()
  const handle = (value: string) => {
    calls.push(value)
    if (value === 'bad') throw new Error('cannot handle it')
    handled.push(value)
    if (value === 'after') done.resolve()
  }
  const consumer = await t.consumer({ groupId, retry: { initialRetryTime: 20, retries: 20 } })
  await consumer.subscribe({ topics: [topic, ...dl.retryTopics(topic)], fromBeginning: true })
  const eachMessage: EachMessageHandler = async ({ message }) => handle(message.value!.toString())
  const eachBatch: EachBatchHandler = async ({ batch: b, resolveOffset }) => {
    for (const m of b.messages) {
      handle(m.value!.toString())
      resolveOffset(m.offset)
    }
  }
  await consumer.run(batch ? { eachBatch: dl.eachBatch(eachBatch) } : { eachMessage: dl.eachMessage(eachMessage) })
  await done.promise
  return { topic, groupId, calls, handled, disconnect: () => Promise.all([consumer.disconnect(), dl.disconnect()]).then(() => undefined) }
}

async function entries(topic: string): Promise<string[]> {
  return (await readDeadLetters(t.kafka, topic)).map((e) => e.value!.toString())
}

describe('a message is moved once', () => {
  for (const batch of [false, true]) {
    it(`${batch ? 'eachBatch' : 'eachMessage'}: a move whose COMMIT answer was lost is not made again when the message comes back`, async () => {
      const run = await consumeThrough(commitAnswerLost(t.kafka), ['before', 'bad', 'after'], { batch })
      expect(await entries(`${run.topic}.dlq`)).toEqual(['bad'])
      // resolved without the handler when it came back: three attempts in all
      expect(run.calls.filter((v) => v === 'bad')).toHaveLength(3)
      expect(run.handled).toEqual(['before', 'after'])
      await run.disconnect()
    }, 30_000)
  }

  it('retry-topics: a hop whose COMMIT answer was lost is not copied into the retry topic again', async () => {
    const run = await consumeThrough(commitAnswerLost(t.kafka), ['bad', 'after'], { mode: 'retry-topics' })
    await run.disconnect()
    expect(await entries(`${run.topic}.retry-1`)).toEqual(['bad'])
  }, 30_000)

  it('a failure after the move (the attempt row could not be deleted) does not move the message again', async () => {
    const { pool, tables, release } = await t.kafka.database()
    const fn = `"${tables.schema}".refuse_attempt_delete`
    await pool.query(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'delete refused'; END $$`)
    await pool.query(`CREATE TRIGGER refuse_delete BEFORE DELETE ON ${tables.deliveryAttempt} FOR EACH ROW EXECUTE FUNCTION ${fn}()`)
    try {
      const run = await consumeThrough(t.kafka, ['bad', 'after'])
      await run.disconnect()
      expect(await entries(`${run.topic}.dlq`)).toEqual(['bad'])
    } finally {
      await pool.query(`DROP TRIGGER refuse_delete ON ${tables.deliveryAttempt}`)
      await pool.query(`DROP FUNCTION ${fn}()`)
      await release()
    }
  }, 30_000)

  it('a member stalled past its session in its last attempt, waking after the new owner moved the message, does not move it again', async () => {
    const topic = await t.createTopic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'bad' }, { value: 'after' }] })
    const groupId = uniqueName('g')
    const options = { groupId, topic: `${topic}.dlq`, maxAttempts: 3, backoff: FAST }
    const session = { groupId, sessionTimeout: 3000, heartbeatInterval: 300, retry: { initialRetryTime: 20, retries: 20 } }
    const moved = deferred()
    const handled = deferred()
    // the stalled member: its last attempt hangs (no heartbeat) until the new owner has moved the message, then fails
    const stalled = deadLetter(t.kafka, options)
    await stalled.connect()
    let calls = 0
    const woke = deferred()
    const wrapped = stalled.eachMessage(async ({ message }) => {
      if (message.value!.toString() !== 'bad') return
      if (++calls === 3) await moved.promise
      throw new Error('cannot handle it')
    })
    const first = await t.consumer(session)
    await first.subscribe({ topic, fromBeginning: true })
    await first.run({
      eachMessage: async (p) => {
        try {
          await wrapped(p)
        } finally {
          if (calls === 3) woke.resolve() // its last attempt failed and the wrapper tried to move the message
        }
      },
    })
    // the new owner (another process): the stored count says 2, so its first failure moves the message
    const other = t.newKafka()
    const owner = deadLetter(other, options)
    await owner.connect()
    owner.on(owner.events.DEAD_LETTER, () => moved.resolve())
    const second = other.consumer(session)
    await second.connect()
    await second.subscribe({ topic, fromBeginning: true })
    await second.run({
      eachMessage: owner.eachMessage(async ({ message }) => {
        if (message.value!.toString() === 'bad') throw new Error('cannot handle it')
        handled.resolve()
      }),
    })
    await Promise.all([moved.promise, handled.promise])
    // the stalled member wakes up and fails its last attempt: its move finds the mark (and its generation is stale)
    await woke.promise
    await Promise.all([first.disconnect(), stalled.disconnect(), second.disconnect(), owner.disconnect()])
    expect(calls).toBe(3)
    expect(await entries(`${topic}.dlq`)).toEqual(['bad'])
  }, 40_000)

  it('two moves of one message serialize on its mark: the second finds the first one, and nothing moves once the group is past it', async () => {
    const topic = await t.createTopic(1)
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'a' }, { value: 'b' }] })
    const { pool, tables, release } = await t.kafka.database()
    const key: AttemptKey = { group: uniqueName('g'), topic, partition: 0, offset: '0' }
    const [first, second] = [await pool.connect(), await pool.connect()]
    try {
      await first.query('BEGIN')
      await second.query('BEGIN')
      expect(await claimMove(first, tables, key, 3, 'Error: x')).toBe(true)
      const racing = claimMove(second, tables, key, 3, 'Error: x') // waits for the first move's COMMIT
      await new Promise((r) => setTimeout(r, 100))
      await first.query('COMMIT')
      expect(await racing).toBe(false)
      await second.query('ROLLBACK')
      expect(await isDone(pool, tables, key)).toBe(true)
      // a message the group has committed past is not moved (its mark may be swept already)
      const next: AttemptKey = { ...key, offset: '1' }
      expect(await isDone(pool, tables, next)).toBe(false)
      const [{ id: topicId }] = await findTopics(pool, tables, [topic])
      await commitOffsets(pool, tables, key.group, [{ topicId, partition: 0, offset: '2' }], { lockOwner: null, exact: true })
      expect(await isDone(pool, tables, next)).toBe(true)
      expect(await claimMove(pool, tables, next, 3, 'Error: x')).toBe(false)
    } finally {
      first.release()
      second.release()
      await release()
    }
  })
})
