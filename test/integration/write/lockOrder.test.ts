// Issue #14 item 1: every write path (transactions at commit, outbox sends, plain and idempotent multi-partition
// sends) takes the partitions' locks in one global (topic_id, partition_id) order, whatever order the messages came
// in, so concurrent writers never deadlock; the seqs they get are dense and follow commit order.
import type pg from 'pg'
import { describe, expect, it } from 'vitest'
import type { Message } from 'kafkajs'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('write-lock-order', { pool: { max: 12 } })

const RUN_MS = 4000
const PARTITIONS = 3

interface Committed {
  /** "topic/partition" -> keys in send order */
  keys: Map<string, string[]>
  start: bigint
  end: bigint
}

function shuffle<T>(xs: T[]): T[] {
  const a = [...xs]
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[a[i], a[j]] = [a[j], a[i]]
  }
  return a
}

/** A random subset (at least two) of every topic/partition, in random order, with 1-3 messages each. */
function randomWrite(topics: string[], tag: string): Array<{ topic: string; messages: Message[] }> {
  const targets = shuffle(topics.flatMap((topic) => Array.from({ length: PARTITIONS }, (_, p) => ({ topic, p }))))
  return targets.slice(0, 2 + Math.floor(Math.random() * (targets.length - 1))).map(({ topic, p }) => ({
    topic,
    messages: Array.from({ length: 1 + Math.floor(Math.random() * 3) }, (_, i) => ({ key: `${tag}/${topic}/${p}/${i}`, value: 'v', partition: p })),
  }))
}

function keysOf(batches: Array<{ topic: string; messages: Message[] }>): Map<string, string[]> {
  const keys = new Map<string, string[]>()
  for (const b of batches)
    for (const m of b.messages) {
      const k = `${b.topic}/${m.partition}`
      keys.set(k, [...(keys.get(k) ?? []), String(m.key)])
    }
  return keys
}

describe('lock order', () => {
  it('concurrent multi-partition transactions, outbox and plain sends in random orders: 0 deadlocks, 0 gaps, seqs in commit order', async () => {
    const topics = [uniqueName('order-a'), uniqueName('order-b')]
    const admin = t.kafka.admin()
    await admin.connect()
    await admin.createTopics({ topics: topics.map((topic) => ({ topic, numPartitions: PARTITIONS })) })
    await admin.disconnect()
    const plain = await t.producer()
    const idempotent = await t.producer({ idempotent: true })
    const committed: Committed[] = []
    const errors: unknown[] = []
    const deadline = Date.now() + RUN_MS
    let n = 0

    const loop = async (once: (tag: string) => Promise<Committed | undefined>) => {
      while (Date.now() < deadline) {
        try {
          const c = await once(`w${n++}`)
          if (c) committed.push(c)
        } catch (e) {
          errors.push(e)
        }
      }
    }
    const transactional = async (i: number) => {
      const producer = await t.producer({ transactionalId: uniqueName(`tx${i}`), idempotent: true, maxInFlightRequests: 1 })
      await loop(async (tag) => {
        const writes = randomWrite(topics, tag)
        const tx = await producer.transaction()
        for (const w of writes) await tx.send(w)
        const start = process.hrtime.bigint()
        await tx.commit()
        return { keys: keysOf(writes), start, end: process.hrtime.bigint() }
      })
    }
    const outbox = async () => {
      const client: pg.Client = await t.db.connect()
      await loop(async (tag) => {
        const writes = randomWrite(topics, tag)
        await client.query('BEGIN')
        try {
          for (const w of writes) await plain.sendWith(client, w)
        } catch (e) {
          await client.query('ROLLBACK')
          throw e
        }
        const start = process.hrtime.bigint()
        await client.query('COMMIT')
        return { keys: keysOf(writes), start, end: process.hrtime.bigint() }
      })
    }
    const batch = async (producer: typeof plain) => {
      await loop(async (tag) => {
        const writes = randomWrite(topics, tag)
        const start = process.hrtime.bigint()
        await producer.sendBatch({ topicMessages: writes })
        return { keys: keysOf(writes), start, end: process.hrtime.bigint() }
      })
    }
    await Promise.all([transactional(1), transactional(2), transactional(3), outbox(), outbox(), outbox(), batch(plain), batch(idempotent)])

    const deadlocks = errors.filter((e) => /deadlock/i.test(String((e as Error).message)))
    console.log(`lock order: ${committed.length} writes committed in ${RUN_MS} ms, ${errors.length} errors, ${deadlocks.length} deadlocks`)
    expect(deadlocks).toEqual([])
    expect(errors).toEqual([])
    expect(committed.length).toBeGreaterThan(20)

    // every row, by topic/partition, in seq order
    const { rows } = await t.db.pool.query<{ part: string; seq: string; key: string }>(
      `SELECT t.topic_name || '/' || m.partition_id AS part, m.enqueue_seq::text AS seq, m.routing_key AS key
       FROM ${'"' + t.db.schema + '"'}.metadata_queue_message m JOIN ${'"' + t.db.schema + '"'}.metadata_queue_topic t ON t.id = m.topic_id
       WHERE t.topic_name = ANY($1) ORDER BY 1, m.enqueue_seq`,
      [topics],
    )
    const seqOf = new Map<string, number>()
    const byPart = new Map<string, number[]>()
    for (const r of rows) {
      seqOf.set(r.key, Number(r.seq))
      byPart.set(r.part, [...(byPart.get(r.part) ?? []), Number(r.seq)])
    }
    // 0 gaps, 0 duplicates: each partition holds exactly 1..N
    let expected = 0
    for (const [part, seqs] of byPart) {
      expect(seqs, part).toEqual(seqs.map((_, i) => i + 1))
      expected += seqs.length
    }
    const sent = committed.reduce((a, c) => a + [...c.keys.values()].reduce((x, k) => x + k.length, 0), 0)
    expect(expected).toBe(sent)
    // a write's rows keep their send order within a partition
    for (const c of committed)
      for (const keys of c.keys.values()) {
        const seqs = keys.map((k) => seqOf.get(k)!)
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
      }
    // seqs follow commit order: a write that committed before another began committing has the lower seqs. Per
    // partition, the writes sorted by commit end with a running max of their seqs: for each write, every write that
    // ended before it started is a prefix (binary search), so n log n instead of all pairs (1,886 writes on a quiet
    // machine made the pairwise check alone outlast the test's timeout)
    let pairs = 0
    const late: string[] = []
    const byPartition = new Map<string, Array<{ start: bigint; end: bigint; min: number; max: number }>>()
    for (const c of committed)
      for (const [part, keys] of c.keys) {
        const seqs = keys.map((k) => seqOf.get(k)!)
        const list = byPartition.get(part) ?? byPartition.set(part, []).get(part)!
        list.push({ start: c.start, end: c.end, min: Math.min(...seqs), max: Math.max(...seqs) })
      }
    for (const [part, writes] of byPartition) {
      const ended = [...writes].sort((x, y) => (x.end < y.end ? -1 : x.end > y.end ? 1 : 0))
      const maxUpTo: number[] = []
      for (const w of ended) maxUpTo.push(Math.max(w.max, maxUpTo.at(-1) ?? -Infinity))
      for (const b of writes) {
        let lo = 0
        let hi = ended.length
        while (lo < hi) {
          const mid = (lo + hi) >> 1
          if (ended[mid].end < b.start) lo = mid + 1
          else hi = mid
        }
        if (lo === 0) continue
        pairs += lo
        if (maxUpTo[lo - 1] >= b.min) late.push(`${part}: seq ${b.min} committed after a write holding seq ${maxUpTo[lo - 1]} had ended`)
      }
    }
    expect(late).toEqual([])
    expect(pairs).toBeGreaterThan(0)
  }, 30_000)
})
