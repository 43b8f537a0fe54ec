// One group-id rule everywhere: "a\ud800b" and "a\udfffb" were stored as the same group (node-postgres sends an
// unpaired surrogate as U+FFFD), and admin.fetchOffsets skipped the check the consumer made.
import { describe, expect, it } from 'vitest'
import { KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import { useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('security_group_ids')

describe('group ids', () => {
  it('consumer, admin and sendOffsets refuse a group id PostgreSQL cannot store as given', async () => {
    const topic = await t.createTopic(1, 'gid')
    const admin = t.kafka.admin()
    await admin.connect()
    const refused: string[] = []
    for (const groupId of ['a\ud800b', 'a\udfffb', 'a\u0000b', 'g'.repeat(256)]) {
      const calls: Array<[string, () => unknown]> = [
        ['consumer', () => t.kafka.consumer({ groupId })],
        ['fetchOffsets', () => admin.fetchOffsets({ groupId, topics: [topic] })],
        ['setOffsets', () => admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '0' }] })],
        ['resetOffsets', () => admin.resetOffsets({ groupId, topic, earliest: false })],
        ['describeGroups', () => admin.describeGroups([groupId])],
        ['deleteGroups', () => admin.deleteGroups([groupId])],
      ]
      for (const [name, call] of calls) {
        const err = await Promise.resolve()
          .then(call)
          .then(
            () => undefined,
            (e: unknown) => e,
          )
        expect(err, `${name} ${JSON.stringify(groupId).slice(0, 20)}`).toBeInstanceOf(KafkaJSNonRetriableError)
        refused.push(name)
      }
    }
    console.log(`groupIds: ${refused.length} calls refused`)
    await admin.disconnect()
    const { rows } = await t.db.pool.query(`SELECT count(*)::int AS n FROM "${t.db.schema}".metadata_queue_consumer_offset`)
    expect(rows[0].n).toBe(0)
  })
})
