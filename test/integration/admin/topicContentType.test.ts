// Topics we create (admin.createTopics, a producer's auto-create) carry a default content type, as DataHub's own
// topic upsert does: DataHub's readers resolve a row's content type as COALESCE(row, topic default).
import { describe, expect, it } from 'vitest'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('admin_content_type')

async function defaultMime(name: string): Promise<string | null> {
  const res = await t.db.pool.query<{ mime: string | null }>(
    `SELECT c.mime FROM "${t.db.schema}".metadata_queue_topic tp
     LEFT JOIN "${t.db.schema}".metadata_queue_content_type c ON c.id = tp.default_content_type_id
     WHERE tp.topic_name = $1`,
    [name],
  )
  return res.rows[0].mime
}

describe('default content type of new topics', () => {
  it('is application/avro for admin.createTopics and for a producer auto-create', async () => {
    const created = await t.createTopic(2)
    expect(await defaultMime(created)).toBe('application/avro')
    const producer = await t.producer()
    const auto = uniqueName('auto')
    await producer.send({ topic: auto, messages: [{ value: 'x' }] })
    expect(await defaultMime(auto)).toBe('application/avro')
  })

  it('follows topicDefaults.contentTypeMime, adding the MIME to the catalogue when new', async () => {
    const kafka = t.newKafka({ topicDefaults: { contentTypeMime: 'application/json' } })
    const admin = kafka.admin()
    await admin.connect()
    try {
      const a = uniqueName('json')
      const b = uniqueName('json')
      await admin.createTopics({ topics: [{ topic: a }, { topic: b }] })
      expect([await defaultMime(a), await defaultMime(b)]).toEqual(['application/json', 'application/json'])
    } finally {
      await admin.disconnect()
    }
  })
})
