// A batch is handed to the handler only with most of a session of lease left (issue #13, found by the checker:
// another member entered a handler while this member's 1.7 s handler ran, under a 3 s session). The lease is
// renewed by heartbeats between fetch rounds; a round's later batches used to start with whatever the earlier
// batches' handlers had left of it, so a handler well under the session timeout could outlive its lease.
import { describe, expect, it } from 'vitest'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('lease_at_hand_out')

const SESSION_MS = 3000
const HEARTBEAT_MS = 300
const HANDLER_MS = 900

async function leaseLeftMs(group: string, partition: number): Promise<number> {
  const { rows } = await t.db.pool.query<{ left: number }>(
    `SELECT extract(epoch FROM locked_until - clock_timestamp()) * 1000 AS left
     FROM "${t.db.schema}".metadata_queue_partition_lease WHERE consumer_group = $1 AND partition_id = $2`,
    [group, partition],
  )
  return Number(rows[0]?.left ?? -1)
}

describe('lease left when a batch is handed out', () => {
  it('every batch of a round starts with at least sessionTimeout - heartbeatInterval of lease, however slow the batches before it', async () => {
    const partitions = 4
    const topic = await t.createTopic(partitions)
    const group = uniqueName('g')
    const producer = await t.producer()
    await producer.send({ topic, messages: Array.from({ length: partitions }, (_, p) => ({ value: `m${p}`, partition: p })) })

    const consumer = await t.consumer({ groupId: group, sessionTimeout: SESSION_MS, heartbeatInterval: HEARTBEAT_MS })
    await consumer.subscribe({ topic, fromBeginning: true })
    const left: number[] = []
    let all!: () => void
    const done = new Promise<void>((r) => (all = r))
    await consumer.run({
      eachBatch: async ({ batch }) => {
        left.push(await leaseLeftMs(group, batch.partition))
        // a slow handler, well under the session timeout (the time is the point of the test, not a wait)
        await new Promise((r) => setTimeout(r, HANDLER_MS))
        if (left.length === partitions) all()
      },
    })
    await done
    console.log(`lease left at each hand-out (ms): ${left.map((l) => Math.round(l)).join(', ')}`)
    // generous slack for the beat's own round trips on a loaded machine; without a beat between batches the
    // fourth batch started with about SESSION_MS - 3 * HANDLER_MS = 300 ms left
    for (const l of left) expect(l).toBeGreaterThan(SESSION_MS - HEARTBEAT_MS - 600)
  })
})
