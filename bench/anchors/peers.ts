// The anchors' sides for PgQue 0.2.0 and pgmq 1.5.1: installed from their vendored SQL (bench/anchors/<name>/) into
// the scratch database, driven through their SQL APIs from node-postgres, one connection per producer or consumer,
// prepared statements (named queries). Each function times only what the scenario names.
import fs from 'node:fs'
import path from 'node:path'
import pg from 'pg'

import { PEERS, VERSIONS, type Peer } from './versions.js'

export { PEERS, VERSIONS, type Peer }

const now = () => performance.timeOrigin + performance.now()

export async function installPeers(url: string, log: (m: string) => void): Promise<void> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    await c.query('SET client_min_messages = warning')
    for (const peer of PEERS) {
      const started = Date.now()
      // the published install scripts as they are (plain SQL; pgmq's creates its schema when not an extension)
      await c.query(fs.readFileSync(path.join(__dirname, peer, `${peer}.sql`), 'utf8'))
      log(`installed ${peer} ${VERSIONS[peer]} in ${Date.now() - started} ms`)
    }
  } finally {
    await c.end()
  }
}

async function connect(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  return c
}

/** pgmq takes jsonb, PgQue text: the same JSON document for both (and its bytes for us). */
function sendStatement(peer: Peer, queue: string, batch: number): pg.QueryConfig {
  return peer === 'pgque'
    ? { name: `pgque-send-${batch}`, text: 'SELECT pgque.send_batch($1, $2::text[])', values: [queue] }
    : { name: `pgmq-send-${batch}`, text: 'SELECT count(*) FROM pgmq.send_batch($1, $2::jsonb[])', values: [queue] }
}

async function createQueue(c: pg.Client, peer: Peer, queue: string): Promise<void> {
  await c.query(peer === 'pgque' ? 'SELECT pgque.create_queue($1)' : 'SELECT pgmq.create($1)', [queue])
}

/** Sends `total` payloads in batches of `batch`, one statement per batch, one at a time. Returns msg/s. */
export async function peerProduce(url: string, peer: Peer, queue: string, payloads: string[], total: number, batch: number): Promise<number> {
  const c = await connect(url)
  try {
    await createQueue(c, peer, queue)
    const st = sendStatement(peer, queue, batch)
    const chunk = (i: number) => {
      const out = new Array<string>(Math.min(batch, total - i))
      for (let k = 0; k < out.length; k++) out[k] = payloads[(i + k) % payloads.length]!
      return out
    }
    await c.query({ ...st, values: [queue, chunk(0)] }) // prepares the statement (not counted)
    const started = now()
    for (let i = 0; i < total; i += batch) await c.query({ ...st, values: [queue, chunk(i)] })
    return total / ((now() - started) / 1000)
  } finally {
    await c.end()
  }
}

/**
 * Stored messages for the consume and fan-out scenarios. PgQue: one queue, the consumers subscribed before the load
 * (PgQ delivers only what was written after a subscription), a tick after every 1,000 messages (as its ticker would
 * cut them at its default ticker_max_count of 500), then its tables ANALYZEd: without fresh statistics its receive
 * plans go bad (~2,000 msg/s). pgmq has no fan-out: one queue per consumer, each holding its own copy.
 */
export async function peerLoad(url: string, peer: Peer, queues: string[], consumers: string[], payloads: string[], total: number): Promise<void> {
  const c = await connect(url)
  try {
    const batch = 1000
    const chunk = (i: number) => Array.from({ length: Math.min(batch, total - i) }, (_, k) => payloads[(i + k) % payloads.length]!)
    for (const queue of queues) {
      await createQueue(c, peer, queue)
      if (peer === 'pgque') for (const consumer of consumers) await c.query('SELECT pgque.subscribe($1, $2)', [queue, consumer])
      const st = sendStatement(peer, queue, batch)
      for (let i = 0; i < total; i += batch) {
        await c.query({ ...st, values: [queue, chunk(i)] })
        if (peer === 'pgque') await c.query({ name: 'pgque-tick', text: 'SELECT pgque.ticker($1)', values: [queue] })
      }
      if (peer === 'pgque') {
        await c.query('SELECT pgque.force_tick($1)', [queue])
        await c.query('SELECT pgque.ticker($1)', [queue])
      }
    }
    if (peer === 'pgque') {
      const tables = await c.query<{ t: string }>(`SELECT format('%I.%I', schemaname, tablename) AS t FROM pg_tables WHERE schemaname = 'pgque'`)
      for (const { t } of tables.rows) await c.query(`ANALYZE ${t}`)
    } else {
      await c.query('ANALYZE')
    }
  } finally {
    await c.end()
  }
}

export interface DrainResult {
  deliveries: number
  firstAt: number
  lastAt: number
}

/**
 * One consumer, its own connection, reading `expected` messages: PgQue receive (a whole tick batch) + ack; pgmq
 * read 1,000 (visibility timeout 30 s) + delete of their ids (its at-least-once acknowledgement).
 */
async function drainOne(url: string, peer: Peer, queue: string, consumer: string, expected: number): Promise<DrainResult> {
  const c = await connect(url)
  let deliveries = 0
  let firstAt = 0
  let lastAt = 0
  const deadline = Date.now() + 600_000
  try {
    while (deliveries < expected) {
      if (Date.now() > deadline) throw new Error(`${peer} ${consumer}: ${deliveries} of ${expected} after 600 s`)
      if (peer === 'pgque') {
        const r = await c.query<{ batch_id: string; payload: string }>({
          name: 'pgque-receive',
          text: 'SELECT batch_id, payload FROM pgque.receive($1, $2, 100000)',
          values: [queue, consumer],
        })
        if (r.rows.length === 0) continue
        if (firstAt === 0) firstAt = now()
        await c.query({ name: 'pgque-ack', text: 'SELECT pgque.ack($1)', values: [r.rows[0]!.batch_id] })
        deliveries += r.rows.length
      } else {
        const r = await c.query<{ msg_id: string; message: unknown }>({
          name: 'pgmq-read',
          text: 'SELECT msg_id, message FROM pgmq.read($1, 30, 1000)',
          values: [queue],
        })
        if (r.rows.length === 0) continue
        if (firstAt === 0) firstAt = now()
        await c.query({ name: 'pgmq-delete', text: 'SELECT pgmq.delete($1, $2::bigint[])', values: [queue, r.rows.map((m) => m.msg_id)] })
        deliveries += r.rows.length
      }
      lastAt = now()
    }
    return { deliveries, firstAt, lastAt }
  } finally {
    await c.end()
  }
}

/** Consumers side by side, each on its own connection; deliveries per second from the first delivery to the last. */
export async function peerDrain(url: string, peer: Peer, pairs: Array<{ queue: string; consumer: string }>, expected: number): Promise<number> {
  const results = await Promise.all(pairs.map((p) => drainOne(url, peer, p.queue, p.consumer, expected)))
  const firstAt = Math.min(...results.map((r) => r.firstAt))
  const lastAt = Math.max(...results.map((r) => r.lastAt))
  const deliveries = results.reduce((n, r) => n + r.deliveries, 0)
  return deliveries / (Math.max(lastAt - firstAt, 1) / 1000)
}
