// Issue #25 item 2 across real processes: a topic deleted and re-created by another process. The consumer in the
// child keeps its group (no CRASH) and consumes the re-created topic; before, its heartbeat's registration insert
// hit the deleted topic id's foreign key until it crashed for good.
import { describe, expect, it } from 'vitest'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'
import { spawnFixture } from '../../helpers/processes.js'

const t = useTestKafka('consumer_topic_deleted')

describe('a topic deleted and re-created by another process', () => {
  it('a consumer in a child process survives it and consumes the new topic', async () => {
    const topic = await t.createTopic(1, 'gone')
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'before' }] })
    const child = spawnFixture('consumerWorker.ts', { PG_URL: t.db.connectionString, PG_SCHEMA: t.db.schema, TOPIC: topic, GROUP: uniqueName('g') })
    await child.waitForLine((l) => l.startsWith('m before '))
    const admin = t.kafka.admin()
    await admin.connect()
    try {
      await admin.deleteTopics({ topics: [topic] })
      // the re-created topic has a new id: the child's cached row (metadataMaxAge 300 s) names the deleted one
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })
      await producer.send({ topic, messages: [{ value: 'reborn' }] })
      await child.waitForLine((l) => l.startsWith('m reborn '), 45_000)
      expect(child.lines.filter((l) => l.startsWith('crash'))).toEqual([])
    } finally {
      await admin.disconnect()
      child.proc.kill('SIGTERM')
      await child.exited
    }
  }, 90_000)
})
