// A worker of the compacted-topic run (test/torture/compacted.ts), kept apart from the main checker's workers.
// role=producer: keyed records (some tombstones) to the compacted topic, one send at a time, each attempt written to
// its history file before the send and its acknowledgement (partition, offset) after it. role=maintenance:
// maintenance runs back to back (compaction among them) with small batches. Either may be SIGKILLed at any time.
import { appendFileSync } from 'node:fs'
import { runMaintenance } from '../../../src/maintenance/run.js'
import { resolveConfig } from '../../../src/config/resolve.js'
import { Kafka } from '../../../src/kafka.js'
import { logLevel } from '../../../src/kafkajs/exports.js'

export interface CompactedSpec {
  role: 'producer' | 'maintenance'
  writer: string
  pgUrl: string
  schema: string
  topic: string
  /** the keys this producer owns (no two producers share a key, so "the last acknowledged value" is defined) */
  keys: string[]
  history: string
  seed: number
}

/** One line of a producer's history. */
export type CompactedEvent =
  { k: 'attempt'; id: string; key: string; value: string | null } | { k: 'ack'; id: string; partition: number; offset: string }

const spec = JSON.parse(process.env.COMPACTED_SPEC!) as CompactedSpec
let state = spec.seed >>> 0 || 1
const random = () => {
  state ^= state << 13
  state ^= state >>> 17
  state ^= state << 5
  return (state >>> 0) / 2 ** 32
}
const write = (e: CompactedEvent) => appendFileSync(spec.history, `${JSON.stringify(e)}\n`)

async function producer(kafka: Kafka) {
  const p = kafka.producer({ retry: { retries: 3, initialRetryTime: 50 } })
  await p.connect().catch(() => undefined)
  for (let n = 0; ; n++) {
    const key = spec.keys[Math.floor(random() * spec.keys.length)]!
    const value = random() < 0.1 ? null : `${spec.writer}:${n}`
    const id = `${spec.writer}:${n}`
    write({ k: 'attempt', id, key, value })
    try {
      const [meta] = await p.send({ topic: spec.topic, messages: [{ key, value }] })
      write({ k: 'ack', id, partition: meta!.partition, offset: meta!.baseOffset! })
    } catch {
      await new Promise((r) => setTimeout(r, 100)) // the server restarts, or the pool recovers
    }
  }
}

async function maintenance(kafka: Kafka) {
  const { maintenance } = resolveConfig({ schema: spec.schema })
  for (;;) {
    try {
      const db = await kafka.database()
      try {
        await runMaintenance({ pool: db.pool, tables: db.tables, maintenance }, { batchDeleteLimit: 1 + Math.floor(random() * 50), vacuum: false })
      } finally {
        await db.release()
      }
    } catch {
      // a restarting server: try again
    }
    await new Promise((r) => setTimeout(r, 50 + random() * 300))
  }
}

const kafka = new Kafka({ clientId: spec.writer, logLevel: logLevel.NOTHING, pgqueue: { connectionString: spec.pgUrl, schema: spec.schema } })
void (spec.role === 'producer' ? producer(kafka) : maintenance(kafka))
