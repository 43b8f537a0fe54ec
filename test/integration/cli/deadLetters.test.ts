// `dead-letters list` and `dead-letters replay`: an operator looks at what failed and sends chosen messages back.
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { runCli } from '../../../src/cli/main.js'
import { deadLetter } from '../../../src/deadLetter/index.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('cli_dead_letters')

async function cli(args: string[]) {
  const [stdout, stderr] = [new PassThrough(), new PassThrough()]
  let out = ''
  let err = ''
  stdout.on('data', (d) => (out += d))
  stderr.on('data', (d) => (err += d))
  const code = await runCli([...args, '--url', t.db.connectionString, '--schema', t.db.schema], { stdin: new PassThrough(), stdout, stderr })
  return { code, stdout: out, stderr: err }
}

/** Dead-letters `poison` (it always fails) from a one-partition topic; returns the topics and the group. */
async function deadLetterOne() {
  const topic = await t.createTopic(1, 'cli_dlq_src')
  const dlq = await t.createTopic(1, 'cli_dlq')
  const groupId = uniqueName('cli_dlq_group')
  const producer = await t.producer()
  await producer.send({ topic, messages: [{ value: 'fine' }, { key: 'k1', value: 'poison', headers: { trace: 't-1' } }] })
  const dl = deadLetter(t.kafka, { groupId, topic: dlq, maxAttempts: 2, backoff: { initialMs: 5, maxMs: 5 } })
  await dl.connect()
  const moved = new Promise<void>((resolve) => dl.on(dl.events.DEAD_LETTER, () => resolve()))
  const consumer = await t.consumer({ groupId })
  await consumer.subscribe({ topic, fromBeginning: true })
  await consumer.run({
    eachMessage: dl.eachMessage(async ({ message }) => {
      if (message.value!.toString() === 'poison') throw new Error('bad payload')
    }),
  })
  await moved
  await Promise.all([consumer.disconnect(), dl.disconnect()])
  return { topic, dlq, groupId }
}

describe('dead-letters', () => {
  it('list shows where each entry came from, its attempts and its error', async () => {
    const { topic, dlq, groupId } = await deadLetterOne()
    const res = await cli(['dead-letters', 'list', dlq, '--json'])
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout)).toEqual([
      { partition: 0, offset: 0, key: 'k1', origin: { topic, partition: 0, offset: 1, group: groupId }, attempts: 2, error: 'Error: bad payload' },
    ])
    const table = await cli(['dead-letters', 'list', dlq])
    expect(table.stdout).toContain(`${topic}/0@1`)
  })

  it('replay sends the chosen entry back to its partition with its original key and headers', async () => {
    const { topic, dlq } = await deadLetterOne()
    const admin = t.kafka.admin()
    await admin.connect()
    const before = (await admin.fetchTopicOffsets(topic))[0]!.high
    const res = await cli(['dead-letters', 'replay', dlq, '--offset', '0:0'])
    expect(res.code, res.stderr).toBe(0)
    expect(res.stdout).toContain('Replayed 1 message(s)')
    expect((await admin.fetchTopicOffsets(topic))[0]!.high).toBe(String(Number(before) + 1))
    await admin.disconnect()

    const reader = await t.consumer()
    await reader.subscribe({ topic, fromBeginning: true })
    const got: { key: string | null; value: string; headers: Record<string, string> }[] = []
    await new Promise<void>((resolve) => {
      void reader.run({
        eachMessage: async ({ message }) => {
          got.push({
            key: message.key?.toString() ?? null,
            value: message.value!.toString(),
            headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])),
          })
          if (got.length === 3) resolve()
        },
      })
    })
    expect(got[2]).toEqual({ key: 'k1', value: 'poison', headers: { trace: 't-1' } })
  })

  it('replay refuses an unknown entry and bad usage without sending anything', async () => {
    const { topic, dlq } = await deadLetterOne()
    expect((await cli(['dead-letters', 'replay', dlq, '--offset', '0:9'])).code).toBe(1)
    expect((await cli(['dead-letters', 'replay', dlq])).code).toBe(2)
    expect((await cli(['dead-letters', 'replay', dlq, '--all', '--offset', '0:0'])).code).toBe(2)
    expect((await cli(['dead-letters', 'replay', dlq, '--offset', 'x'])).code).toBe(2)
    const admin = t.kafka.admin()
    await admin.connect()
    expect((await admin.fetchTopicOffsets(topic))[0]!.high).toBe('2')
    await admin.disconnect()
  })

  it('retrying shows a message failing right now with its attempts and last error (the stored last_error)', async () => {
    const topic = await t.createTopic(1, 'cli_dlq_retrying')
    const groupId = uniqueName('cli_retrying_group')
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'poison' }] })
    // a long wait after the first failure keeps the message in its retry while the CLI looks
    const dl = deadLetter(t.kafka, { groupId, topic: `${topic}.dlq`, maxAttempts: 3, backoff: { initialMs: 120_000, maxMs: 120_000, jitter: 0 } })
    await dl.connect()
    const retrying = new Promise<void>((resolve) => dl.on(dl.events.RETRY, () => resolve()))
    const consumer = await t.consumer({ groupId })
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachMessage: dl.eachMessage(async () => {
        throw new RangeError('price out of range')
      }),
    })
    await retrying
    try {
      const res = await cli(['dead-letters', 'retrying', '--group', groupId, '--json'])
      expect(res.code, res.stderr).toBe(0)
      const rows = JSON.parse(res.stdout)
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({ group: groupId, topic, partition: 0, offset: 0, attempts: 1, lastError: 'RangeError: price out of range' })
      const table = await cli(['dead-letters', 'retrying', '--topic', topic])
      expect(table.stdout).toContain('RangeError: price out of range')
      expect(JSON.parse((await cli(['dead-letters', 'retrying', '--group', 'nobody', '--json'])).stdout)).toEqual([])
    } finally {
      await Promise.all([consumer.disconnect(), dl.disconnect()])
    }
  })

  it('retrying leaves out a message that failed in one member and then succeeded in another (its row outlived the first)', async () => {
    const topic = await t.createTopic(1, 'cli_dlq_moved_on')
    const groupId = uniqueName('cli_moved_on_group')
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'flaky' }] })
    const options = { groupId, topic: `${topic}.dlq`, maxAttempts: 3, backoff: { initialMs: 120_000, maxMs: 120_000, jitter: 0 } }
    const first = deadLetter(t.kafka, options)
    await first.connect()
    const failedOnce = new Promise<void>((resolve) => first.on(first.events.RETRY, () => resolve()))
    const c1 = await t.consumer({ groupId })
    await c1.subscribe({ topic, fromBeginning: true })
    await c1.run({
      eachMessage: first.eachMessage(async () => {
        throw new Error('not yet')
      }),
    })
    await failedOnce
    await Promise.all([c1.disconnect(), first.disconnect()]) // gives up the wait; the stored count stays
    expect(JSON.parse((await cli(['dead-letters', 'retrying', '--group', groupId, '--json'])).stdout)).toHaveLength(1)

    const second = deadLetter(t.kafka, options)
    await second.connect()
    const c2 = await t.consumer({ groupId })
    await c2.subscribe({ topic, fromBeginning: true })
    // the success is committed: the commit event names offset 1
    const committed = new Promise<void>((resolve) =>
      c2.on(c2.events.COMMIT_OFFSETS, (e) => {
        if (e.payload.topics.some((x) => x.partitions.some((p) => p.offset === '1'))) resolve()
      }),
    )
    await c2.run({ eachMessage: second.eachMessage(async () => {}) })
    await committed
    await Promise.all([c2.disconnect(), second.disconnect()])
    expect(JSON.parse((await cli(['dead-letters', 'retrying', '--group', groupId, '--json'])).stdout)).toEqual([])
  })
})
