// Consumer memory is bounded by bytes, not rows (issue #17 item 5): a backlog of 1 MB messages is fetched
// maxBytes at a time (prefetch included), so the consumer's resident memory stays within a stated bound. The
// payloads are random (incompressible): the budget counts stored bytes, as Kafka's counts record batches.
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'
import { spawnFixture } from '../../helpers/processes.js'

const t = useTestKafka('fetch_bytes')
const MB = 1 << 20
const COUNT = 80
const MAX_BYTES = 4 * MB

describe('fetch bounded by bytes', () => {
  it(`a backlog of ${COUNT} x 1 MB messages: peak RSS stays within baseline + 3 x maxBytes + 64 MB (allocator and GC slack)`, async () => {
    const topic = await t.createTopic(1)
    const producer = await t.producer()
    for (let sent = 0; sent < COUNT; sent += 10) {
      await producer.send({ topic, messages: Array.from({ length: 10 }, () => ({ value: randomBytes(MB), partition: 0 })) })
    }
    const child = spawnFixture('memoryConsumer.ts', {
      PG_URL: t.db.connectionString,
      PG_SCHEMA: t.db.schema,
      TOPIC: topic,
      GROUP: uniqueName('g'),
      COUNT: String(COUNT),
      MAX_BYTES: String(MAX_BYTES),
      MAX_BYTES_PER_PARTITION: String(MB),
    })
    const baseline = Number((await child.waitForLine((l) => l.startsWith('baseline '), 60_000)).split(' ')[1])
    const done = await child.waitForLine((l) => l.startsWith('done '), 120_000)
    const peak = Number(done.split(' ')[2])
    child.proc.kill('SIGTERM')
    await child.exited
    const bound = baseline + 3 * MAX_BYTES + 64 * MB
    console.log(
      `${COUNT} x 1 MB, maxBytes ${MAX_BYTES / MB} MB: baseline RSS ${(baseline / MB).toFixed(0)} MB, peak ${(peak / MB).toFixed(0)} MB (growth ${((peak - baseline) / MB).toFixed(0)} MB), bound ${(bound / MB).toFixed(0)} MB`,
    )
    expect(peak).toBeLessThan(bound)
  }, 240_000)
})
