// A transaction's sendOffsets (a dead-letter move, consume-transform-produce) for a message handed out before the
// member's lease lapsed and was taken again under the same generation: the member restarted the partition from the
// committed offset meanwhile, and translating the commit with that fresh state moved every priority past the
// message, so the older, less urgent messages never handed out were skipped for good. Found by the randomized
// checker (`lost` in its dead-letter group, priorities on, a proxy delay outlasting the session).
import { expect, it } from 'vitest'
import type { KafkaJSProtocolError } from '../../../src/kafkajs/errors.js'
import { waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('reacquired_lease')

it('is fenced, and the less urgent messages are still handed out', async () => {
  const topic = await t.createTopic(1)
  const groupId = uniqueName('g')
  const producer = await t.producer()
  await producer.send({
    topic,
    messages: [
      { value: 'n0', partition: 0 },
      { value: 'n1', partition: 0 },
      { value: 'urgent', partition: 0, priority: 2 },
    ] as never[],
  })
  const tx = await t.producer({ transactionalId: uniqueName('tx'), idempotent: true, maxInFlightRequests: 1 })
  const first = await t.consumer({ groupId, heartbeatInterval: 50 })
  await first.subscribe({ topic, fromBeginning: true })
  let outcome: string | undefined
  await first.run({
    eachMessage: async ({ message, heartbeat, pause }) => {
      if (message.value!.toString() !== 'urgent' || outcome) return
      // the process stalled past its session: its lease lapses, and the next beat takes the partition again
      await t.db.pool.query(
        `UPDATE ${t.db.schema}.metadata_queue_partition_lease SET locked_until = now() - interval '1 second' WHERE consumer_group = $1`,
        [groupId],
      )
      await new Promise((r) => setTimeout(r, 120)) // past heartbeatInterval, so the beat is due
      await heartbeat()
      const transaction = await tx.transaction()
      try {
        await transaction.sendOffsets({
          consumerGroupId: groupId,
          topics: [{ topic, partitions: [{ partition: 0, offset: (BigInt(message.offset) + 1n).toString() }] }],
        })
        await transaction.commit()
        outcome = 'committed'
      } catch (e) {
        await transaction.abort().catch(() => undefined)
        outcome = (e as KafkaJSProtocolError).type ?? (e as Error).name
      }
      pause() // nothing more from this member: the next one starts where the stored offsets say
    },
  })
  await waitFor(() => outcome, { what: 'the transaction of the urgent message' })
  await first.disconnect()
  const handled: string[] = []
  const next = await t.consumer({ groupId })
  await next.subscribe({ topic, fromBeginning: true })
  await next.run({ eachMessage: async ({ message }) => void handled.push(message.value!.toString()) })
  await waitFor(() => ['n0', 'n1'].every((v) => handled.includes(v)), { what: 'the less urgent messages handed out', timeout: 10_000 })
  expect(outcome).toBe('ILLEGAL_GENERATION')
}, 30_000)
