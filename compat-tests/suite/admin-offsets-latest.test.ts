import { describe, expect } from 'vitest'
import { contract } from '../harness.js'

describe('admin offsets by special timestamps', () => {
  contract('fetchTopicOffsetsByTimestamp(-1) is the latest offset and (-2) the earliest, as ListOffsets', async (t) => {
    const topic = await t.topic(2)
    const producer = await t.producer()
    await producer.send({
      topic,
      messages: [
        { value: 'a', partition: 0 },
        { value: 'b', partition: 0 },
        { value: 'c', partition: 1 },
      ],
    })
    const admin = await t.admin()
    const sorted = (xs: Array<{ partition: number; offset: string }>) => [...xs].sort((a, b) => a.partition - b.partition)
    expect(sorted(await admin.fetchTopicOffsetsByTimestamp(topic, -1))).toEqual([
      { partition: 0, offset: '2' },
      { partition: 1, offset: '1' },
    ])
    expect(sorted(await admin.fetchTopicOffsetsByTimestamp(topic, -2))).toEqual([
      { partition: 0, offset: '0' },
      { partition: 1, offset: '0' },
    ])
  })
})
