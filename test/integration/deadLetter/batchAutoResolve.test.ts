// deadLetter().eachBatch in retry-topics mode cuts a batch into runs of messages that are due. After a run the handler
// returned from, the wrapper resolved the run's last message itself (right under eachBatchAutoResolve, where
// returning means "all handled"); with eachBatchAutoResolve: false a message the handler deliberately left unresolved
// (KafkaJS: not processed, fetched again) was then committed unhandled (issue 34 item 2: the handler resolved m0
// and m2 of m0..m2, the group committed offset 3, m1 never came again). And a message moved after such a gap: its
// move's transaction committed past it (sendOffsets of its offset + 1), so the unresolved message before it was
// committed unhandled too (the randomized checker's dead-letter group, seeds 20261201 and 20261205).
import type { EachBatchPayload } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { deadLetter } from '../../../src/deadLetter/index.js'
import { DLT_HEADERS, RETRY_HEADERS } from '../../../src/deadLetter/headers.js'
import { waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('dl_batch_resolve')

/** m0 and m1 due now, m2 a retry-topic message due in a second: the wrapper hands out [m0, m1], then [m2]. */
async function runs(autoResolve: boolean, handle: (p: EachBatchPayload) => void | Promise<void>) {
  const topic = await t.createTopic(1)
  const groupId = uniqueName('g')
  const producer = await t.producer()
  const due = { [DLT_HEADERS.attempts]: '1', [RETRY_HEADERS.notBefore]: String(Date.now() + 1000) }
  await producer.send({ topic, messages: [{ value: 'm0' }, { value: 'm1' }, { value: 'm2', headers: due }] })
  const dl = deadLetter(t.kafka, { groupId, topic: `${topic}.dlq`, mode: 'retry-topics', maxAttempts: 3 })
  const moves: string[] = []
  dl.on(dl.events.RETRY, (e) => moves.push(e.payload.offset))
  await dl.connect()
  const consumer = await t.consumer({ groupId })
  await consumer.subscribe({ topic, fromBeginning: true })
  const calls: string[][] = []
  await consumer.run({
    eachBatchAutoResolve: autoResolve,
    eachBatch: dl.eachBatch(async (p) => {
      calls.push(p.batch.messages.map((m) => m.value!.toString()))
      await handle(p)
    }),
  })
  return { topic, groupId, calls, moves, stop: () => Promise.all([consumer.disconnect(), dl.disconnect()]) }
}

describe('deadLetter().eachBatch in retry-topics mode', () => {
  it('eachBatchAutoResolve: false: a message the handler left unresolved comes again', async () => {
    let left = false
    const { calls, stop } = await runs(false, (p) => {
      for (const m of p.batch.messages) {
        // the first time m1 is handed out the handler stops there, unresolved: it is not processed
        if (m.value!.toString() === 'm1' && !left) {
          left = true
          break
        }
        p.resolveOffset(m.offset)
      }
    })
    // before the fix the wrapper resolved m1 with its run, the handler's resolve of m2 was committed (offset 3) and
    // m1 never came again
    await waitFor(() => calls.flat().filter((v) => v === 'm1').length >= 2, { what: 'm1 handed out again', timeout: 10_000 })
    await stop()
    expect(calls[0]).toEqual(['m0', 'm1'])
  }, 30_000)

  it('eachBatchAutoResolve: false: a message moved after one left unresolved does not commit past it', async () => {
    let left = false
    const stored: Array<string | null> = []
    const committed = async (topic: string) => {
      const { rows } = await t.db.pool.query<{ offset_value: string }>(
        `SELECT o.offset_value::text FROM "${t.db.schema}".metadata_queue_consumer_offset o
         JOIN "${t.db.schema}".metadata_queue_topic tp ON tp.id = o.topic_id WHERE tp.topic_name = $1`,
        [topic],
      )
      return rows[0]?.offset_value ?? null
    }
    const { topic, calls, moves, stop } = await runs(false, async (p) => {
      for (const m of p.batch.messages) {
        if (m.value!.toString() === 'm1') {
          // what a member taking the partition over now would start from
          if (left) stored.push(await committed(p.batch.topic))
          else {
            left = true
            break
          }
        }
        if (m.value!.toString() === 'm2') throw new Error('m2 fails: moved to the next retry topic')
        p.resolveOffset(m.offset)
      }
    })
    await waitFor(() => stored.length > 0, { what: 'm1 handed out again', timeout: 10_000 })
    // before the fix m2's move committed offset 3 in its transaction: another member (a restart, a rebalance)
    // would never have seen m1 again
    expect(Number(stored[0] ?? 0)).toBeLessThanOrEqual(1)
    // m1 resolved now; m2, fetched again behind it, is known moved: resolved without another attempt or move
    await waitFor(async () => (await committed(topic)) === '3', { what: 'the group committed past m2', timeout: 10_000 })
    await stop()
    expect(calls.filter((c) => c.includes('m2'))).toEqual([['m2']])
    expect(moves).toEqual(['2'])
    const { rows } = await t.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${t.db.schema}".metadata_queue_message m
       JOIN "${t.db.schema}".metadata_queue_topic tp ON tp.id = m.topic_id WHERE tp.topic_name = $1`,
      [`${topic}.retry-2`],
    )
    expect(rows[0].n).toBe(1)
  }, 30_000)

  it('eachBatchAutoResolve: true: a run the handler returned from counts as handled, nothing comes again', async () => {
    const { groupId, calls, stop } = await runs(true, () => undefined)
    await waitFor(() => calls.flat().includes('m2'), { what: 'm2 handed out', timeout: 10_000 })
    await stop()
    // the wrapper's runs and KafkaJS's auto-resolve covered the batch: committed past m2
    const { rows } = await t.db.pool.query<{ offset_value: string }>(
      `SELECT offset_value::text FROM "${t.db.schema}".metadata_queue_consumer_offset WHERE consumer_group = $1`,
      [groupId],
    )
    expect(calls.flat()).toEqual(['m0', 'm1', 'm2'])
    expect(rows.map((r) => r.offset_value)).toEqual(['3'])
  }, 30_000)
})
