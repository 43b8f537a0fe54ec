// Three producer processes racing on ONE partition (plain sends, an idempotent producer, and transactions of which
// every third is aborted): enqueue_seq stays unique and gap-free, each producer's messages keep their send order,
// and a transaction's messages are contiguous (the ledger row lock serialises allocation until commit).
import { describe, expect, it } from 'vitest'
import { tablesFor } from '../../src/db/tables.js'
import { uniqueName, useTestKafka } from '../helpers/kafka.js'
import { spawnFixture } from '../helpers/processes.js'

const t = useTestKafka('fault_race')

describe('producers racing on one partition', () => {
  it('enqueue_seq is unique and gap-free, per-producer order kept, aborted transactions leave no gap', async () => {
    const topic = uniqueName('race')
    const admin = t.kafka.admin()
    await admin.connect()
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] })
    await admin.disconnect()
    const startAt = String(Date.now() + 6000)
    const base = { PG_URL: t.db.connectionString, PG_SCHEMA: t.db.schema, TOPIC: topic, PARTITION: '0', KEYS: '0', START_AT: startAt }
    const plain = spawnFixture('faultProducer.ts', { ...base, TAG: 'ra', MODE: 'stream', COUNT: '400', BATCH: '1' })
    const idempotent = spawnFixture('faultProducer.ts', { ...base, TAG: 'rc', MODE: 'stream', COUNT: '400', BATCH: '4', IDEMPOTENT: '1' })
    const txns = spawnFixture('faultProducer.ts', {
      ...base,
      TAG: 'rb',
      MODE: 'txn',
      COUNT: '90',
      BATCH: '3',
      ABORT_EVERY: '3',
      TXN_ID: uniqueName('race-txn'),
    })
    const children = [plain, idempotent, txns]
    expect(await Promise.all(children.map((c) => c.exited))).toEqual([0, 0, 0])
    const committed = txns.lines.filter((l) => l.startsWith('committed ')).map((l) => Number(l.split(' ')[1]))
    const aborted = txns.lines.filter((l) => l.startsWith('aborted ')).map((l) => Number(l.split(' ')[1]))

    const tb = tablesFor(t.db.schema, 'metadata_queue')
    const { rows } = await t.db.pool.query<{ partition_id: number; seq: string; value: string }>(
      `SELECT m.partition_id, m.enqueue_seq::text AS seq, convert_from(m.payload, 'UTF8') AS value
       FROM ${tb.message} m JOIN ${tb.topic} tp ON tp.id = m.topic_id WHERE tp.topic_name = $1 ORDER BY m.enqueue_seq`,
      [topic],
    )
    const { rows: checks } = await t.db.pool.query<{ n: number; distinct_seqs: number; lo: string; hi: string; next: string }>(
      `SELECT count(*)::int AS n, count(DISTINCT m.enqueue_seq)::int AS distinct_seqs, min(m.enqueue_seq)::text AS lo,
              max(m.enqueue_seq)::text AS hi, (SELECT s.next_seq::text FROM ${tb.partitionSeq} s
                                               WHERE s.topic_id = tp.id AND s.partition_id = 0) AS next
       FROM ${tb.message} m JOIN ${tb.topic} tp ON tp.id = m.topic_id WHERE tp.topic_name = $1 AND m.partition_id = 0
       GROUP BY tp.id`,
      [topic],
    )
    const expected = 400 + 400 + committed.length * 3
    const c = checks[0]
    // how often the writer changed along the sequence: the race was real
    let switches = 0
    for (let i = 1; i < rows.length; i++) if (rows[i].value.slice(0, 2) !== rows[i - 1].value.slice(0, 2)) switches++
    console.log(
      `race on one partition: ${c.n} rows (expected ${expected}: 400 plain + 400 idempotent + ${committed.length}x3 committed, ${aborted.length} aborted), ` +
        `seq ${c.lo}..${c.hi}, ${c.distinct_seqs} distinct, next_seq ${c.next}; writer switched ${switches} times along the sequence`,
    )
    expect(rows.every((r) => r.partition_id === 0)).toBe(true)
    expect(c.n).toBe(expected)
    expect(c.distinct_seqs).toBe(c.n)
    expect(c.lo).toBe('1')
    expect(c.hi).toBe(String(c.n))
    expect(c.next).toBe(String(c.n + 1))
    expect(switches).toBeGreaterThan(10)
    // every producer's own messages in its send order
    for (const tag of ['ra', 'rc']) {
      const ns = rows.filter((r) => r.value.startsWith(`${tag}-`)).map((r) => Number(r.value.split('-')[1]))
      expect(ns).toEqual(Array.from({ length: 400 }, (_, i) => i))
    }
    // committed transactions whole and contiguous, aborted ones absent
    for (const txn of committed) {
      const seqs = rows.filter((r) => r.value.startsWith(`rb-t${txn}-`)).map((r) => Number(r.seq))
      expect(seqs).toHaveLength(3)
      expect(seqs[2] - seqs[0]).toBe(2)
    }
    for (const txn of aborted) expect(rows.some((r) => r.value.startsWith(`rb-t${txn}-`))).toBe(false)
  }, 60_000)
})
