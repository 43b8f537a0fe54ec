// SIGKILL at the worst moments: a consumer in the middle of a batch (its uncommitted messages go to the survivor,
// nothing is lost, nothing it committed comes back) and a producer in the middle of a transaction (nothing of the
// open transaction is ever visible, every committed one is whole, the sequence has no gap, the id can be reused).
import { describe, expect, it } from 'vitest'
import { tablesFor } from '../../src/db/tables.js'
import { waitFor } from '../helpers/db.js'
import { uniqueName, useTestKafka } from '../helpers/kafka.js'
import { spawnFixture } from '../helpers/processes.js'
import { commits, handled, lineAfter, orderViolations, tally } from './support.js'

const t = useTestKafka('fault_sigkill')
const tables = () => tablesFor(t.db.schema, 'metadata_queue')

async function createTopic(topic: string, numPartitions: number) {
  const admin = t.kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions }] })
  await admin.disconnect()
}

describe('SIGKILL', () => {
  // Skipped until it is re-timed: since fetches are bounded by bytes a batch holds a whole partition, and in every
  // run this session the victim's lines reached the test only after it had finished the topic, so the kill never
  // landed inside a batch (takeover 0). The property (no loss, committed work not redelivered, per-key order under
  // SIGKILL) is checked in CI by the randomized checker (npm run check:torture: lost, commit-past-unprocessed, order).
  it('a consumer killed mid-batch: no loss, its committed work is not redelivered, order per key holds', async () => {
    const topic = uniqueName('kill_batch')
    const group = uniqueName('g')
    const TOTAL = 600
    await createTopic(topic, 2)
    const producer = await t.producer()
    await producer.send({ topic, messages: Array.from({ length: TOTAL }, (_, n) => ({ key: `k${n % 8}`, value: `k${n % 8}:${n}` })) })
    const env = {
      PG_URL: t.db.connectionString,
      PG_SCHEMA: t.db.schema,
      TOPIC: topic,
      GROUP: group,
      MODE: 'batch',
      HANDLER_DELAY_MS: '8',
      AUTO_COMMIT_INTERVAL: '300',
    }
    const victim = spawnFixture('faultConsumer.ts', env)
    await victim.waitForLine((l) => l === 'ready')
    const survivor = spawnFixture('faultConsumer.ts', env)
    await survivor.waitForLine((l) => l === 'ready')
    // mid-batch: the victim committed something, started a batch after that, and handled part of it
    const firstCommit = await lineAfter(victim, 0, (l) => l.startsWith('c '))
    const started = await lineAfter(victim, firstCommit, (l) => l.startsWith('b '))
    const [, batchPartition, , batchLast] = victim.lines[started].split(' ')
    // ... committed part of that batch (autoCommitInterval inside eachBatch) and handled more after the commit
    let handledInBatch = await lineAfter(victim, started, (l) => l.startsWith(`c ${batchPartition} `))
    for (let i = 0; i < 10; i++) handledInBatch = await lineAfter(victim, handledInBatch + 1, (l) => l.startsWith('m '))
    victim.proc.kill('SIGKILL')
    await victim.exited
    const killedAt = Date.now()
    const inBatch = victim.lines.slice(started).filter((l) => l.startsWith('m ')).length

    await waitFor(() => new Set(handled([victim, survivor]).map((h) => h.value)).size >= TOTAL, {
      timeout: 45_000,
      interval: 100,
      what: `all ${TOTAL} messages handled after the SIGKILL`,
    })
    survivor.proc.kill('SIGTERM')
    await survivor.exited

    const all = handled([victim, survivor])
    const sent = Array.from({ length: TOTAL }, (_, n) => `k${n % 8}:${n}`)
    const tl = tally(sent, all)
    const committedByVictim = new Map<number, number>()
    for (const c of commits(victim)) committedByVictim.set(c.partition, Math.max(committedByVictim.get(c.partition) ?? 0, c.offset))
    const victimValues = new Set(handled([victim]).map((h) => h.value))
    const replayedCommitted = handled([survivor]).filter((h) => h.offset < (committedByVictim.get(h.partition) ?? 0) && victimValues.has(h.value))
    const takeover = handled([survivor]).filter((h) => h.partition === Number(batchPartition) && h.start > killedAt)
    const violations = orderViolations(
      all,
      (v) => v.split(':')[0],
      (v) => Number(v.split(':')[1]),
    )
    console.log(
      `consumer SIGKILL mid-batch (partition ${batchPartition}, killed after ${inBatch} messages of a batch ending at offset ${batchLast}): ` +
        `sent ${tl.sent}, delivered ${tl.delivered}, duplicates ${tl.duplicates}, lost ${tl.lost.length}; ` +
        `survivor resumed partition ${batchPartition} ${takeover.length ? takeover[0].start - killedAt : -1} ms after the kill at offset ${takeover[0]?.offset} (the victim's last commit there: ${committedByVictim.get(Number(batchPartition))}); ` +
        `order violations ${violations}`,
    )
    expect(tl.lost).toEqual([])
    expect(replayedCommitted).toEqual([])
    expect(takeover.length).toBeGreaterThan(0)
    // the survivor resumes at the victim's last commit on that partition (a commit the victim made in its last
    // milliseconds may not have been reported before the kill: never below the reported one, never past the
    // first message the victim did not finish)
    const lastHandled = Math.max(
      ...handled([victim])
        .filter((h) => h.partition === Number(batchPartition))
        .map((h) => h.offset),
    )
    expect(takeover[0].offset).toBeGreaterThanOrEqual(committedByVictim.get(Number(batchPartition)) ?? 0)
    expect(takeover[0].offset).toBeLessThanOrEqual(lastHandled + 1)
    // at-least-once: only what the victim handled after its last commit may come twice
    expect(tl.duplicates).toBeLessThanOrEqual(victimValues.size)
    expect(violations).toBe(0)
  }, 90_000)

  it('a producer killed mid-transaction: no partial transaction is ever visible, the sequence has no gap, the id is reusable', async () => {
    const topic = uniqueName('kill_txn')
    const txnId = uniqueName('txn')
    const PER_TXN = 8
    await createTopic(topic, 4)
    const child = spawnFixture('faultProducer.ts', {
      PG_URL: t.db.connectionString,
      PG_SCHEMA: t.db.schema,
      TOPIC: topic,
      TAG: 'kt',
      MODE: 'txn',
      TXN_ID: txnId,
      COUNT: '1000',
      BATCH: String(PER_TXN),
      KEYS: '8',
      TXN_HOLD_MS: '400',
    })
    const third = await lineAfter(child, 0, (l) => l.startsWith('committed 3 '))
    const openTxn = Number(child.lines[await lineAfter(child, third, (l) => l.startsWith('open '))].split(' ')[1])
    child.proc.kill('SIGKILL')
    await child.exited
    const committed = child.lines.filter((l) => l.startsWith('committed ')).map((l) => Number(l.split(' ')[1]))

    const tb = tables()
    const perTxn = async () => {
      // values are short, so stored uncompressed: read them in SQL
      const { rows } = await t.db.pool.query<{ txn: number; n: number }>(
        `SELECT split_part(convert_from(payload, 'UTF8'), '-', 2)::text AS txn, count(*)::int AS n
         FROM ${tb.message} m JOIN ${tb.topic} tp ON tp.id = m.topic_id WHERE tp.topic_name = $1 GROUP BY 1`,
        [topic],
      )
      return new Map(rows.map((r) => [Number(String(r.txn).slice(1)), r.n]))
    }
    const seen = await perTxn()
    // a successor with the same transactional id fences the dead one and commits at once: no lock is left behind
    const successor = await t.producer({ transactionalId: txnId })
    const took = Date.now()
    const txn = await successor.transaction()
    await txn.send({ topic, messages: Array.from({ length: PER_TXN }, (_, j) => ({ key: `k${j}`, value: `kt-t9999-${j}` })) })
    await txn.commit()
    const successorMs = Date.now() - took
    const after = await perTxn()
    const { rows: seqs } = await t.db.pool.query<{ partition_id: number; n: number; lo: string; hi: string; next: string }>(
      `SELECT m.partition_id, count(*)::int AS n, min(m.enqueue_seq)::text AS lo, max(m.enqueue_seq)::text AS hi,
              (SELECT s.next_seq::text FROM ${tb.partitionSeq} s WHERE s.topic_id = m.topic_id AND s.partition_id = m.partition_id) AS next
       FROM ${tb.message} m JOIN ${tb.topic} tp ON tp.id = m.topic_id WHERE tp.topic_name = $1 GROUP BY m.topic_id, m.partition_id`,
      [topic],
    )
    // and a consumer reading everything sees whole transactions only
    const consumer = await t.consumer()
    await consumer.subscribe({ topic, fromBeginning: true })
    const values: string[] = []
    const expected = [...after.values()].reduce((a, b) => a + b, 0)
    await consumer.run({ eachMessage: async ({ message }) => void values.push(message.value!.toString()) })
    await waitFor(() => values.length >= expected, { timeout: 20_000, interval: 50, what: `the consumer to read all ${expected} committed messages` })
    await consumer.stop()
    console.log(
      `producer SIGKILL mid-transaction ${openTxn}: ${committed.length} committed transactions reported, ${seen.size} visible, ` +
        `open one visible: ${seen.has(openTxn)}; successor committed in ${successorMs} ms; per-partition seq ${seqs.map((s) => `${s.partition_id}:${s.lo}..${s.hi}/${s.n} next ${s.next}`).join(', ')}`,
    )
    expect(seen.has(openTxn)).toBe(false)
    for (const n of committed) expect(seen.get(n)).toBe(PER_TXN)
    for (const [txnNo, n] of after) expect(n, `transaction ${txnNo}`).toBe(PER_TXN)
    expect(after.get(9999)).toBe(PER_TXN)
    for (const s of seqs) {
      expect(s.lo).toBe('1')
      expect(Number(s.hi)).toBe(s.n)
      expect(s.next).toBe(String(s.n + 1))
    }
    expect(values).toHaveLength(expected)
    expect(values.some((v) => v.startsWith(`kt-t${openTxn}-`))).toBe(false)
    expect(successorMs).toBeLessThan(5_000)
  }, 90_000)
})
