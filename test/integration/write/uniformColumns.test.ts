// A send passes a column that is the same in every row as one scalar (its array NULL): every combination of uniform
// and varying columns, nulls among them, must store each row exactly as given.
import { describe, expect, it } from 'vitest'
import { tablesFor } from '../../../src/db/tables.js'
import { enqueuePartition, type StoredMessage } from '../../../src/store/enqueue.js'
import { useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('uniform_columns')

const base = (i: number): StoredMessage => ({
  routingKey: 'same',
  messageKey: null,
  flags: 0,
  priority: 5,
  payload: Buffer.from(`payload-${i}`),
  compression: 0,
  headers: null,
  timestamp: 1764600000000,
})

/** each column varying alone, with a null among its values where the column takes one */
const varying: Record<string, (m: StoredMessage, i: number) => Partial<StoredMessage>> = {
  none: () => ({}),
  routingKey: (_, i) => ({ routingKey: i % 2 ? `k${i}` : '' }),
  messageKey: (_, i) => ({ messageKey: i % 2 ? Buffer.from([0, i, 0xff]) : null }),
  flags: (_, i) => ({ flags: i % 3 === 0 ? 3 : 0 }),
  priority: (_, i) => ({ priority: i % 10 }),
  compression: (_, i) => ({ compression: i % 2 ? 2 : 0 }),
  headers: (_, i) => ({ headers: i % 2 ? JSON.stringify([{ key: 'h', value: String(i) }]) : null }),
  timestamp: (_, i) => ({ timestamp: i % 2 ? 1764600000000 + i : null }),
  all: (_, i) => ({ routingKey: `r${i}`, messageKey: i % 2 ? Buffer.from([i]) : null, priority: 9 - (i % 10), headers: '[]', timestamp: i }),
}

describe('uniform columns sent as scalars', () => {
  for (const [column, change] of Object.entries(varying)) {
    for (const n of [1, 7]) {
      it(`${column} varying, ${n} row${n > 1 ? 's' : ''}: every row stored as given`, async () => {
        const topic = await t.createTopic(1, `${column}-${n}`)
        const id = (await t.db.pool.query<{ id: string }>(`SELECT id FROM ${t.db.schema}.metadata_queue_topic WHERE topic_name = $1`, [topic]))
          .rows[0].id
        const rows = Array.from({ length: n }, (_, i) => ({ ...base(i), ...change(base(i), i) }))
        const client = await t.db.connect()
        try {
          await enqueuePartition(client, tablesFor(t.db.schema, 'metadata_queue'), id, 0, rows)
        } finally {
          await client.end()
        }
        const stored = await t.db.pool.query(
          `SELECT routing_key, message_key, kafka_flags & 3 AS flags, priority, payload, payload_compression, headers::text AS headers,
                  message_timestamp
           FROM ${t.db.schema}.metadata_queue_message WHERE topic_id = $1 ORDER BY enqueue_seq`,
          [id],
        )
        expect(
          stored.rows.map((r) => ({
            routingKey: r.routing_key,
            messageKey: r.message_key,
            flags: r.flags,
            priority: r.priority,
            payload: r.payload,
            compression: r.payload_compression,
            headers: r.headers === null ? null : JSON.stringify(JSON.parse(r.headers)),
            timestamp: r.message_timestamp === null ? null : Number(r.message_timestamp),
          })),
        ).toEqual(rows)
      })
    }
  }
})
