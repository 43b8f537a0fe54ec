// Sequence numbers never restart: the ledger carries them, and retention keeps each partition's newest row (the
// anchor), so DataHub's MAX(enqueue_seq)+1 producers continue from it too.
import { describe, expect, it } from 'vitest'
import type { KafkaMessage } from 'kafkajs'
import { deferred, waitFor } from '../../helpers/db.js'
import { uniqueName } from '../../helpers/kafka.js'
import { useMaintenanceFixture } from './helpers.js'

const m = useMaintenanceFixture('maint_sequence')

async function committed(group: string, topicId: string): Promise<string | undefined> {
  const rows = await m.sql<{ offset: string }>(
    `SELECT offset_value::text AS offset FROM ${m.tables.consumerOffset}
     WHERE consumer_group = $1 AND topic_id = $2 AND partition_id = 0`,
    [group, topicId],
  )
  return rows[0]?.offset
}

describe('sequence survival', () => {
  it('continues offsets after aggressive retention purges a partition down to its anchor; the committed group gets the next message', async () => {
    const topic = await m.retentionTopic({ aggressive: true })
    const producer = await m.producer()
    await producer.send({ topic: topic.name, messages: Array.from({ length: 10 }, (_, i) => ({ value: `v${i}` })) })

    const groupId = uniqueName('group')
    const consumer = await m.consumer({ groupId })
    await consumer.subscribe({ topic: topic.name, fromBeginning: true })
    const after = deferred<KafkaMessage>()
    await consumer.run({
      eachMessage: async ({ message }) => {
        if (message.value?.toString() === 'after') after.resolve(message)
      },
    })
    await waitFor(async () => (await committed(groupId, topic.id)) === '10', { timeout: 15_000 })

    const report = await m.run()
    expect(report.byTopic[topic.name].aggressive).toBe(9)
    expect(report.aggressiveBlocked.filter((b) => b.topic === topic.name)).toEqual([])
    expect(await m.seqs(topic.id)).toEqual([10])

    const [sent] = await producer.send({ topic: topic.name, messages: [{ value: 'after' }] })
    expect(sent.baseOffset).toBe('10')
    const message = await after.promise
    expect(message.offset).toBe('10')
    await waitFor(async () => (await committed(groupId, topic.id)) === '11', { timeout: 15_000 })

    // the group is not STUCK_AHEAD: the next run purges the old anchor, the new message is the anchor now
    expect((await m.run()).byTopic[topic.name].aggressive).toBe(1)
    expect(await m.seqs(topic.id)).toEqual([11])
    const admin = m.kafka.admin()
    await admin.connect()
    try {
      expect(await admin.fetchTopicOffsets(topic.name)).toEqual([expect.objectContaining({ partition: 0, high: '11', low: '10' })])
    } finally {
      await admin.disconnect()
    }
  })

  it('seeds a missing ledger row past the stored rows before deleting them (topics made by DataHub clients)', async () => {
    const topic = await m.retentionTopic({ maxRows: 1 })
    await m.insertRows(topic.id, 0, 4, { ageSeconds: 10 })
    // as if DataHub's producer had created the topic and its rows: no ledger row
    await m.sql(`DELETE FROM ${m.tables.partitionSeq} WHERE topic_id = $1`, [topic.id])

    const report = await m.run()

    expect(report.ledgerRowsSeeded).toBe(1)
    expect(await m.seqs(topic.id)).toEqual([4])
    const producer = await m.producer()
    const [sent] = await producer.send({ topic: topic.name, messages: [{ value: 'next' }] })
    expect(sent.baseOffset).toBe('4')
  })
})
