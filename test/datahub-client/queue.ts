// DataHub's pgQueue client protocol (Python `datahub.pgqueue.repository` / the Java store), written from the SQL
// documented in /work/shared/reference/datahub-pgqueue.md §1-§5, so tests can run DataHub's side of a shared schema
// against this library. It deliberately keeps DataHub's behaviour, quirks included (per-enqueue topic upsert,
// MAX(enqueue_seq)+1 under the advisory lock, head-of-line per-message leases, __acked__ markers, no GREATEST on
// the offset write): the tests must prove the library copes with the real thing, not with a friendlier client.
import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { dataHubLockKey, dataHubPartition, DATAHUB_TOPIC_CONTENT_TYPE } from '../../src/datahub/routing.js'
import { quoteIdent } from '../../src/db/identifiers.js'

export const ACKED = '__acked__'
const ACKED_LOCKED_UNTIL = '1970-01-01T00:00:00Z'

/** DataHub's topic defaults (Python config.py / application.yaml). */
export interface DataHubTopicSettings {
  partitionCount: number
  retentionMaxAgeSeconds: number
  maxRowsPerTopic: number
  maxTotalPayloadBytes: number
  aggressiveRetention: boolean
  defaultContentTypeMime: string
}

export const DATAHUB_TOPIC_DEFAULTS: DataHubTopicSettings = {
  partitionCount: 2,
  retentionMaxAgeSeconds: 604_800,
  maxRowsPerTopic: 0,
  maxTotalPayloadBytes: 0,
  aggressiveRetention: false,
  defaultContentTypeMime: DATAHUB_TOPIC_CONTENT_TYPE,
}

/** Default priority bands (DATAHUB_PGQUEUE_PRIORITY_BANDS). */
const BANDS: Array<{ min: number; max: number; weight: number }> = [
  { min: 0, max: 3, weight: 70 },
  { min: 4, max: 6, weight: 20 },
  { min: 7, max: 9, weight: 10 },
]

export interface EnqueueItem {
  routingKey: string
  payload: Buffer
  priority?: number
  contentTypeMime?: string | null
  /** DataHub's header JSON: [{ key, v: base64 }] */
  headers?: Array<{ key: string; v: string }> | null
}

export interface Handle {
  id: string
  /** timestamptz as text: a JS Date would drop the microseconds and no longer match the row */
  enqueuedAt: string
  topicId: string
  partitionId: number
  seq: number
}

export interface Received extends Handle {
  priority: number
  payload: Buffer
  mime: string | null
  routingKey: string
  headers: unknown
}

export interface TopicRow {
  id: string
  partitionCount: number
}

export class DataHubQueue {
  private readonly contentTypes = new Map<string, number>()
  private readonly topics = new Map<string, TopicRow>()
  private readonly n: Record<'contentType' | 'topic' | 'message' | 'consumerOffset' | 'lease' | 'registration', string>
  private readonly applyRetentionFn: string

  constructor(
    private readonly pool: pg.Pool,
    schema: string,
    prefix = 'metadata_queue',
    private readonly settings: DataHubTopicSettings = DATAHUB_TOPIC_DEFAULTS,
  ) {
    const q = (suffix: string) => `${quoteIdent(schema)}.${quoteIdent(`${prefix}_${suffix}`)}`
    this.n = {
      contentType: q('content_type'),
      topic: q('topic'),
      message: q('message'),
      consumerOffset: q('consumer_offset'),
      lease: q('message_group_lease'),
      registration: q('consumer_registration'),
    }
    this.applyRetentionFn = `${quoteIdent(schema)}.${quoteIdent(`${prefix}_apply_retention`)}`
  }

  /** lock_owner format of DataHub consumers: `{group}:{uuid}`, one per consumer instance (Python). */
  static lockOwner(group: string): string {
    return `${group}:${randomUUID()}`
  }

  /**
   * One transaction, tried again when PostgreSQL aborted it as a deadlock victim (nothing of it stayed). DataHub's
   * enqueue_batch locks partitions in message order (reference §11 bug 12), and its lock key has no schema in it, so
   * test files on other schemas of the shared database take the same keys: a caller of DataHub's has to retry too.
   */
  private async tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(fn)
      } catch (err) {
        if ((err as { code?: string }).code !== '40P01' || attempt >= 10) throw err
      }
      // a random backoff, so two batches that deadlocked do not meet again in the same order
      await new Promise((r) => setTimeout(r, Math.random() * 50 * attempt))
    }
  }

  private async once<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const c = await this.pool.connect()
    try {
      await c.query('BEGIN')
      const out = await fn(c)
      await c.query('COMMIT')
      return out
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined)
      throw err
    } finally {
      c.release()
    }
  }

  /** §1.1: SELECT, INSERT ... ON CONFLICT DO NOTHING, SELECT; cached per process. */
  private async contentTypeId(c: pg.ClientBase, mime: string): Promise<number> {
    const cached = this.contentTypes.get(mime)
    if (cached !== undefined) return cached
    const select = `SELECT id FROM ${this.n.contentType} WHERE mime = $1`
    let row = (await c.query(select, [mime])).rows[0]
    if (!row) {
      await c.query(`INSERT INTO ${this.n.contentType} (mime) VALUES ($1) ON CONFLICT (mime) DO NOTHING`, [mime])
      row = (await c.query(select, [mime])).rows[0]
    }
    this.contentTypes.set(mime, row.id)
    return row.id
  }

  /** §1.2 ensure_topic: the upsert whose partition_count never shrinks and whose settings are last-writer-wins. */
  private async upsertTopic(c: pg.ClientBase, topic: string): Promise<TopicRow> {
    const s = this.settings
    const ct = await this.contentTypeId(c, s.defaultContentTypeMime)
    const res = await c.query(
      `INSERT INTO ${this.n.topic} AS t (topic_name, partition_count, retention_max_age_seconds, max_rows_per_topic,
                                          max_total_payload_bytes, default_content_type_id, aggressive_retention)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (topic_name) DO UPDATE SET
         partition_count = GREATEST(1, EXCLUDED.partition_count, t.partition_count,
           COALESCE((SELECT MAX(m.partition_id) FROM ${this.n.message} m WHERE m.topic_id = t.id), -1) + 1),
         retention_max_age_seconds = EXCLUDED.retention_max_age_seconds,
         max_rows_per_topic = EXCLUDED.max_rows_per_topic,
         max_total_payload_bytes = EXCLUDED.max_total_payload_bytes,
         default_content_type_id = EXCLUDED.default_content_type_id,
         aggressive_retention = EXCLUDED.aggressive_retention
       RETURNING id::text, partition_count`,
      [topic, s.partitionCount, s.retentionMaxAgeSeconds, s.maxRowsPerTopic, s.maxTotalPayloadBytes, ct, s.aggressiveRetention],
    )
    const row = { id: res.rows[0].id as string, partitionCount: res.rows[0].partition_count as number }
    this.topics.set(topic, row)
    return row
  }

  async ensureTopic(topic: string): Promise<TopicRow> {
    return this.tx((c) => this.upsertTopic(c, topic))
  }

  /** The cached topic row (never refreshed, as DataHub's consumers do), read on first use. */
  async topicRow(topic: string): Promise<TopicRow | undefined> {
    const cached = this.topics.get(topic)
    if (cached) return cached
    const r = (await this.pool.query(`SELECT id::text, partition_count FROM ${this.n.topic} WHERE topic_name = $1`, [topic])).rows[0]
    if (!r) return undefined
    const row = { id: r.id as string, partitionCount: r.partition_count as number }
    this.topics.set(topic, row)
    return row
  }

  /** §2 enqueue: one transaction per call. */
  async enqueue(topic: string, item: EnqueueItem): Promise<Handle> {
    return (await this.enqueueBatch(topic, [item]))[0]
  }

  /** §2 enqueue_batch: one transaction, the topic upserted once, each message under its partition's lock. */
  async enqueueBatch(topic: string, items: EnqueueItem[]): Promise<Handle[]> {
    return this.tx(async (c) => {
      const t = await this.upsertTopic(c, topic)
      const defaultCt = await this.contentTypeId(c, this.settings.defaultContentTypeMime)
      const out: Handle[] = []
      for (const item of items) {
        const priority = item.priority ?? 5
        if (!Number.isInteger(priority) || priority < 0 || priority > 9) throw new RangeError(`priority ${priority}`)
        const mime = item.contentTypeMime ?? null
        const ctId = mime === null ? null : await this.contentTypeId(c, mime)
        const partition = dataHubPartition(item.routingKey, t.partitionCount)
        await c.query('SELECT pg_advisory_xact_lock($1)', [dataHubLockKey(t.id, partition).toString()])
        const res = await c.query(
          `WITH mx AS (SELECT COALESCE(MAX(enqueue_seq), 0) AS max_seq FROM ${this.n.message} WHERE topic_id = $1 AND partition_id = $2)
           INSERT INTO ${this.n.message} (topic_id, partition_id, routing_key, enqueue_seq, priority, payload, content_type_id,
                                          payload_compression, headers)
           SELECT $1, $2, $3, mx.max_seq + 1, $4, $5, $6, 0, CAST($7 AS jsonb) FROM mx
           RETURNING id::text, enqueued_at::text, enqueue_seq`,
          [
            t.id,
            partition,
            item.routingKey,
            priority,
            item.payload,
            ctId === defaultCt ? null : ctId,
            item.headers && item.headers.length > 0 ? JSON.stringify(item.headers) : null,
          ],
        )
        const r = res.rows[0]
        out.push({ id: r.id, enqueuedAt: r.enqueued_at, topicId: t.id, partitionId: partition, seq: Number(r.enqueue_seq) })
      }
      return out
    })
  }

  /** §6: the registration upsert every poll iteration runs as its heartbeat. */
  async register(group: string, topicId: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.n.registration} (consumer_group, topic_id) VALUES ($1, $2)
       ON CONFLICT (consumer_group, topic_id) DO UPDATE SET last_heartbeat_at = now()`,
      [group, topicId],
    )
  }

  /**
   * §3 receive_batch_for_group: one transaction; partitions in the order given, each with the WFQ band split of
   * what is left; inside a band, head-of-line per priority, leasing one message at a time until a lease is refused.
   * `stuckAhead` collects the partitions whose offset is past MAX(seq) (DataHub only warns and continues).
   */
  async receiveBatchForGroup(
    group: string,
    topicId: string,
    partitionIds: number[],
    lockOwner: string,
    visibilitySeconds: number,
    maxMessages: number,
    stuckAhead: number[] = [],
  ): Promise<Received[]> {
    return this.tx(async (c) => {
      const out: Received[] = []
      for (const partition of partitionIds) {
        const remaining = maxMessages - out.length
        if (remaining <= 0) break
        const committed = Number(
          (
            await c.query(`SELECT offset_value FROM ${this.n.consumerOffset} WHERE consumer_group = $1 AND topic_id = $2 AND partition_id = $3`, [
              group,
              topicId,
              partition,
            ])
          ).rows[0]?.offset_value ?? 0,
        )
        const maxSeq = Number(
          (
            await c.query(`SELECT COALESCE(MAX(enqueue_seq), 0) AS m FROM ${this.n.message} WHERE topic_id = $1 AND partition_id = $2`, [
              topicId,
              partition,
            ])
          ).rows[0].m,
        )
        if (committed > maxSeq) stuckAhead.push(partition)
        let bandRemaining = remaining
        let spare = 0
        const limits = batchLimits(remaining)
        for (let b = 0; b < BANDS.length; b++) {
          const cap = Math.min(limits[b] + spare, bandRemaining)
          spare = 0
          const got = await this.headOfLine(c, group, topicId, partition, BANDS[b], committed, cap, lockOwner, visibilitySeconds)
          out.push(...got)
          bandRemaining -= got.length
          spare += cap - got.length
        }
      }
      return out
    })
  }

  private async headOfLine(
    c: pg.ClientBase,
    group: string,
    topicId: string,
    partition: number,
    band: { min: number; max: number },
    committed: number,
    cap: number,
    lockOwner: string,
    visibilitySeconds: number,
  ): Promise<Received[]> {
    const out: Received[] = []
    for (let p = band.min; p <= band.max && out.length < cap; p++) {
      let seqFloor = committed
      while (out.length < cap) {
        const cand = (
          await c.query(
            `SELECT m.id::text, m.enqueued_at::text, m.enqueue_seq FROM ${this.n.message} m
           LEFT JOIN ${this.n.lease} l ON l.message_id = m.id AND l.message_enqueued_at = m.enqueued_at AND l.consumer_group = $1
           WHERE m.topic_id = $2 AND m.partition_id = $3 AND m.enqueue_seq > $4 AND m.priority = $5
             AND (l.id IS NULL OR l.lock_owner <> '${ACKED}')
           ORDER BY m.enqueue_seq LIMIT 1`,
            [group, topicId, partition, seqFloor, p],
          )
        ).rows[0]
        if (!cand) break
        const leased = await c.query(
          `INSERT INTO ${this.n.lease} AS l (message_id, message_enqueued_at, consumer_group, lock_owner, locked_until)
           VALUES ($1, $2, $3, $4, now() + ($5 * interval '1 second'))
           ON CONFLICT (message_id, message_enqueued_at, consumer_group) DO UPDATE
             SET lock_owner = EXCLUDED.lock_owner, locked_until = EXCLUDED.locked_until
             WHERE l.locked_until < now() AND l.lock_owner <> '${ACKED}'
           RETURNING l.message_id`,
          [cand.id, cand.enqueued_at, group, lockOwner, visibilitySeconds],
        )
        if (leased.rowCount === 0) break
        const m = (
          await c.query(
            `SELECT m.priority, m.payload, m.routing_key, m.headers, ct.mime
           FROM ${this.n.message} m JOIN ${this.n.topic} t ON t.id = m.topic_id
           LEFT JOIN ${this.n.contentType} ct ON ct.id = COALESCE(m.content_type_id, t.default_content_type_id)
           WHERE m.id = $1 AND m.enqueued_at = $2`,
            [cand.id, cand.enqueued_at],
          )
        ).rows[0]
        out.push({
          id: cand.id,
          enqueuedAt: cand.enqueued_at,
          topicId,
          partitionId: partition,
          seq: Number(cand.enqueue_seq),
          priority: m.priority,
          payload: m.payload,
          routingKey: m.routing_key,
          headers: m.headers,
          mime: m.mime,
        })
        seqFloor = Number(cand.enqueue_seq)
      }
    }
    return out
  }

  /**
   * §4 commit_for_group: __acked__ markers for every handle (unconditional), then per partition the contiguous
   * watermark over the acked seqs above the current offset, written without GREATEST when it is larger.
   */
  async commitForGroup(group: string, handles: Handle[]): Promise<number> {
    return this.tx(async (c) => {
      for (const h of handles) {
        await c.query(
          `INSERT INTO ${this.n.lease} (message_id, message_enqueued_at, consumer_group, lock_owner, locked_until)
           VALUES ($1, $2, $3, '${ACKED}', $4)
           ON CONFLICT (message_id, message_enqueued_at, consumer_group) DO UPDATE
             SET lock_owner = EXCLUDED.lock_owner, locked_until = EXCLUDED.locked_until`,
          [h.id, h.enqueuedAt, group, ACKED_LOCKED_UNTIL],
        )
      }
      const cells = new Map<string, { topicId: string; partition: number }>()
      for (const h of handles) cells.set(`${h.topicId}:${h.partitionId}`, { topicId: h.topicId, partition: h.partitionId })
      for (const { topicId, partition } of cells.values()) {
        const current = Number(
          (
            await c.query(`SELECT offset_value FROM ${this.n.consumerOffset} WHERE consumer_group = $1 AND topic_id = $2 AND partition_id = $3`, [
              group,
              topicId,
              partition,
            ])
          ).rows[0]?.offset_value ?? 0,
        )
        const acked = (
          await c.query(
            `SELECT m.enqueue_seq FROM ${this.n.message} m
           JOIN ${this.n.lease} l ON l.message_id = m.id AND l.message_enqueued_at = m.enqueued_at
           WHERE l.consumer_group = $1 AND l.lock_owner = '${ACKED}' AND m.topic_id = $2 AND m.partition_id = $3
             AND m.enqueue_seq > $4
           ORDER BY m.enqueue_seq`,
            [group, topicId, partition, current],
          )
        ).rows.map((r) => Number(r.enqueue_seq))
        const next = advanceWatermark(current, acked)
        if (next > current) {
          await c.query(
            `INSERT INTO ${this.n.consumerOffset} (consumer_group, topic_id, partition_id, offset_value, epoch)
             VALUES ($1, $2, $3, $4, 0)
             ON CONFLICT (consumer_group, topic_id, partition_id) DO UPDATE SET offset_value = EXCLUDED.offset_value`,
            [group, topicId, partition, next],
          )
        }
      }
      return handles.length
    })
  }

  /** §5: what Java's store.applyRetention() and Python's apply_topic_retention run. */
  async applyRetention(): Promise<void> {
    await this.pool.query(`SELECT ${this.applyRetentionFn}()`)
  }

  /** The committed offset_value as DataHub reads it (a missing row is 0). */
  async offset(group: string, topicId: string, partition: number): Promise<number> {
    const r = await this.pool.query(
      `SELECT offset_value FROM ${this.n.consumerOffset} WHERE consumer_group = $1 AND topic_id = $2 AND partition_id = $3`,
      [group, topicId, partition],
    )
    return Number(r.rows[0]?.offset_value ?? 0)
  }
}

/** §3 PriorityBandConfig.batchLimits: floor shares, the remainder round-robin from band 0. */
export function batchLimits(remaining: number): number[] {
  const total = BANDS.reduce((a, b) => a + b.weight, 0)
  const limits = BANDS.map((b) => Math.floor((remaining * b.weight) / total))
  let left = remaining - limits.reduce((a, b) => a + b, 0)
  for (let i = 0; left > 0; i = (i + 1) % BANDS.length, left--) limits[i]++
  return limits
}

/** §4 PgQueueContiguousOffset.advanceWatermark: skip values <= watermark, advance while contiguous. */
export function advanceWatermark(current: number, acked: number[]): number {
  let w = current
  for (const seq of [...acked].sort((a, b) => a - b)) {
    if (seq <= w) continue
    if (seq !== w + 1) break
    w = seq
  }
  return w
}
