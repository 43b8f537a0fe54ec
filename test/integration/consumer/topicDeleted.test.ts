// Issue #25 item 2 across real processes: a topic deleted and re-created by another process. The consumer in the
// child keeps its group (no CRASH) and consumes the re-created topic; before, its heartbeat's registration insert
// hit the deleted topic id's foreign key until it crashed for good.
import { describe, expect, it } from 'vitest'
import { quoteIdent } from '../../../src/db/identifiers.js'
import { waitFor } from '../../helpers/db.js'
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

describe('a topic deleted while a commit of its offsets runs', () => {
  it('the commit does not fail on the foreign key: the deleted partition is refused and the consumer keeps running', async () => {
    const topic = await t.createTopic(1, 'racing')
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'one' }] })
    const consumer = await t.consumer()
    const crashes: unknown[] = []
    consumer.on(consumer.events.CRASH, (e) => crashes.push(e.payload.error))
    await consumer.subscribe({ topic, fromBeginning: true })
    let seen = 0
    await consumer.run({ autoCommit: false, eachMessage: async () => void seen++ })
    await waitFor(() => seen === 1, { timeout: 20_000 })

    // the deletion, held open: the commit's foreign-key check waits on the topic row, then finds it gone
    const deleter = await t.db.connect()
    const topicTable = `${quoteIdent(t.db.schema)}.${quoteIdent('metadata_queue_topic')}`
    const deleterPid = (await deleter.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid
    await deleter.query('BEGIN')
    await deleter.query(`DELETE FROM ${topicTable} WHERE topic_name = $1`, [topic])
    const committing = consumer.commitOffsets([{ topic, partition: 0, offset: '1' }]).then(
      () => null,
      (e: unknown) => e as Error & { type?: string },
    )
    await waitFor(async () => {
      const res = await t.db.pool.query(`SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [deleterPid])
      return (res.rowCount ?? 0) > 0
    })
    await deleter.query('COMMIT')
    await deleter.end()
    // the partition is gone, so the commit is refused as for any partition the member no longer holds (before: the
    // foreign-key violation, non-retriable, and from the background commit a CRASH with restart false)
    expect((await committing)?.type).toBe('REBALANCE_IN_PROGRESS')
    expect(crashes).toEqual([])
  }, 60_000)
})
