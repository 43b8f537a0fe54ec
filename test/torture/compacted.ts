// The randomized checker's compacted topic (issue #37), a run of its own beside the main mix (test/torture/cli.ts):
// producers write keyed records and tombstones to a cleanup.policy=compact topic while maintenance compacts it back
// to back, under SIGKILLs of every worker and restarts of a private PostgreSQL. Afterwards maintenance compacts
// until nothing is left to do and a fresh reader reads the topic from the beginning. Checked (docs/compaction.md):
// every key's last acknowledged value survives (or a later attempted one); no key whose latest record is a
// tombstone comes back, and its tombstone is gone (delete.retention.ms is 0) unless it is its partition's last
// record; nothing older than a key's latest record survives; offsets strictly increase and acknowledged records
// keep their offsets.
//   npx tsx test/torture/compacted.ts [--seconds 60] [--seed S] [--producers 3]
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import type { KafkaMessage } from 'kafkajs'
import { Kafka } from '../../src/kafka.js'
import { logLevel } from '../../src/kafkajs/exports.js'
import { runMaintenance } from '../../src/maintenance/run.js'
import { resolveConfig } from '../../src/config/resolve.js'
import { startPrivateServer } from './server.js'
import type { CompactedEvent, CompactedSpec } from './workers/compacted.js'

export interface ReadRecord {
  partition: number
  offset: string
  key: string
  value: string | null
}

export interface CompactedViolation {
  kind: 'lost-latest' | 'resurrected' | 'older-survives' | 'tombstone-kept' | 'offset-order' | 'offset-moved'
  key?: string
  detail: string
}

/**
 * The guarantees over one run: `events` are every producer's history lines, `read` what the final reader got (in
 * delivery order), `last` each partition's last offset (its anchor, which compaction keeps even as a tombstone).
 */
export function checkCompacted(events: CompactedEvent[], read: ReadRecord[], last: Map<number, string>): CompactedViolation[] {
  const out: CompactedViolation[] = []
  const attempts = new Map<string, { key: string; value: string | null; n: number }>()
  const acked = new Map<string, { id: string; partition: number; offset: bigint; value: string | null }>() // key -> last ack
  let n = 0
  for (const e of events) {
    if (e.k === 'attempt') attempts.set(e.id, { key: e.key, value: e.value, n: n++ })
    else {
      const a = attempts.get(e.id)!
      const prev = acked.get(a.key)
      if (!prev || BigInt(e.offset) > prev.offset) acked.set(a.key, { id: e.id, partition: e.partition, offset: BigInt(e.offset), value: a.value })
    }
  }
  const ackedIds = new Set(events.filter((e) => e.k === 'ack').map((e) => e.id))
  const valueOf = new Map([...attempts].map(([id, a]) => [`${a.key}\u0000${a.value}`, id]))
  const byKey = new Map<string, ReadRecord[]>()
  const lastSeen = new Map<number, bigint>()
  for (const r of read) {
    const prev = lastSeen.get(r.partition)
    if (prev !== undefined && BigInt(r.offset) <= prev)
      out.push({ kind: 'offset-order', detail: `partition ${r.partition}: ${r.offset} after ${prev}` })
    lastSeen.set(r.partition, BigInt(r.offset))
    byKey.set(r.key, [...(byKey.get(r.key) ?? []), r])
  }
  const keys = new Set([...acked.keys(), ...byKey.keys()])
  for (const key of keys) {
    const rs = byKey.get(key) ?? []
    const a = acked.get(key)
    const latest = rs.at(-1)
    // unacknowledged attempts may have committed (a send killed after its COMMIT): they may be what survives
    const unackedLater = (value: string | null) =>
      [...attempts].some(([id, x]) => x.key === key && x.value === value && !ackedIds.has(id) && (!a || x.n > attempts.get(a.id)!.n))
    if (rs.length > 1) out.push({ kind: 'older-survives', key, detail: `${rs.length} records: ${rs.map((r) => r.offset).join(', ')}` })
    if (a && latest && BigInt(latest.offset) < a.offset) {
      // the acknowledged record went, yet an older one of its key stayed: only a later record may supersede it
      const kind = a.value === null ? 'resurrected' : 'lost-latest'
      out.push({ kind, key, detail: `acknowledged ${a.value} at ${a.partition}/${a.offset}, an older ${latest.value} at ${latest.offset} survives` })
    }
    if (a && !latest && a.value !== null && !unackedLater(null)) {
      out.push({ kind: 'lost-latest', key, detail: `acknowledged ${a.value} at ${a.partition}/${a.offset}, nothing read` })
    }
    if (latest && a && BigInt(latest.offset) === a.offset && latest.value !== a.value) {
      out.push({ kind: 'lost-latest', key, detail: `offset ${a.offset} holds ${latest.value}, acknowledged ${a.value}` })
    }
    if (latest && a && BigInt(latest.offset) > a.offset && !unackedLater(latest.value)) {
      out.push({
        kind: a.value === null ? 'resurrected' : 'lost-latest',
        key,
        detail: `${latest.value} at ${latest.offset} after the acknowledged ${a.offset}`,
      })
    }
    if (latest?.value === null && last.get(latest.partition) !== latest.offset) {
      out.push({ kind: 'tombstone-kept', key, detail: `tombstone at ${latest.partition}/${latest.offset} (delete.retention.ms=0)` })
    }
    for (const r of rs) {
      const id = valueOf.get(`${key}\u0000${r.value}`)
      const ack = id ? events.find((e) => e.k === 'ack' && e.id === id) : undefined
      if (ack && ack.k === 'ack' && r.value !== null && ack.offset !== r.offset) {
        out.push({ kind: 'offset-moved', key, detail: `${r.value} acknowledged at ${ack.offset}, read at ${r.offset}` })
      }
    }
  }
  return out
}

async function readAll(kafka: Kafka, topic: string): Promise<{ read: ReadRecord[]; last: Map<number, string> }> {
  const admin = kafka.admin()
  await admin.connect()
  const ends = await admin.fetchTopicOffsets(topic)
  const last = new Map(ends.filter((p) => p.high !== '0').map((p) => [p.partition, (BigInt(p.high) - 1n).toString()]))
  const pending = new Set(last.keys())
  const groupId = `compacted-reader-${Date.now()}`
  const consumer = kafka.consumer({ groupId })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  const read: ReadRecord[] = []
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`final read stuck after ${read.length} records`)), 120_000)
    if (pending.size === 0) resolve()
    void consumer.run({
      eachMessage: async ({ partition, message }: { partition: number; message: KafkaMessage }) => {
        read.push({ partition, offset: message.offset, key: message.key!.toString(), value: message.value?.toString() ?? null })
        if (message.offset === last.get(partition)) pending.delete(partition)
        if (pending.size === 0) {
          clearTimeout(timer)
          resolve()
        }
      },
    })
  })
  await consumer.disconnect()
  await admin.disconnect()
  return { read, last }
}

async function main() {
  const { values } = parseArgs({
    options: { seconds: { type: 'string', default: '60' }, seed: { type: 'string' }, producers: { type: 'string', default: '3' } },
  })
  const seconds = Number(values.seconds)
  const seed = Number(values.seed ?? Date.now() % 1_000_000)
  const producers = Number(values.producers)
  const log = (s: string) => console.log(`[compacted ${seed}] ${s}`)
  const server = await startPrivateServer()
  const dir = mkdtempSync(path.join(os.tmpdir(), 'torture-compacted-'))
  const schema = 'torture_compacted'
  const topic = 'state'
  const kafka = new Kafka({ clientId: 'orchestrator', logLevel: logLevel.NOTHING, pgqueue: { connectionString: server.url, schema, enabled: true } })
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({
    topics: [
      {
        topic,
        numPartitions: 2,
        configEntries: [
          { name: 'cleanup.policy', value: 'compact' },
          { name: 'delete.retention.ms', value: '0' },
          { name: 'min.cleanable.dirty.ratio', value: '0.01' },
        ],
      },
    ],
  })
  await admin.disconnect()

  let rng = seed || 1
  const random = () => (rng = (rng * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  const specs: CompactedSpec[] = [
    ...Array.from({ length: producers }, (_, i) => ({
      role: 'producer' as const,
      writer: `p${i}`,
      keys: Array.from({ length: 20 }, (_, k) => `p${i}-k${k}`),
      history: path.join(dir, `p${i}.jsonl`),
    })),
    { role: 'maintenance' as const, writer: 'm', keys: [], history: path.join(dir, 'm.jsonl') },
  ].map((s, i) => ({ ...s, pgUrl: server.url, schema, topic, seed: seed * 31 + i }))
  const procs = new Map<number, ChildProcess>()
  let incarnation = 0
  const start = (i: number) => {
    // a new writer id per incarnation keeps attempt ids (and values) unique across respawns
    const n = incarnation++
    const spec = { ...specs[i]!, writer: `${specs[i]!.writer}.${n}`, seed: specs[i]!.seed + n * 7919 }
    procs.set(
      i,
      spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'workers', 'compacted.ts')], {
        env: { ...process.env, COMPACTED_SPEC: JSON.stringify(spec) },
        stdio: 'ignore',
      }),
    )
  }
  specs.forEach((_, i) => start(i))
  const faults = { kill: 0, restart: 0 }
  const deadline = Date.now() + seconds * 1000
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1500 + random() * 2500))
    if (random() < 0.15) {
      await server.restart(200 + Math.floor(random() * 800))
      faults.restart++
    } else {
      const i = Math.floor(random() * specs.length)
      procs.get(i)!.kill('SIGKILL')
      faults.kill++
      start(i)
    }
  }
  for (const p of procs.values()) p.kill('SIGKILL')
  log(`ran ${seconds} s: ${faults.kill} SIGKILLs, ${faults.restart} server restarts`)

  // quiesce: compact until a run deletes nothing
  const db = await kafka.database()
  const { maintenance } = resolveConfig({ schema })
  for (let round = 0; round < 50; round++) {
    const r = await runMaintenance({ pool: db.pool, tables: db.tables, maintenance }, { vacuum: false })
    if (!r.skipped && r.compaction.deleted === 0 && r.compaction.scanned === 0) break
  }
  await db.release()
  const events = specs
    .filter((s) => s.role === 'producer')
    .flatMap((s) => {
      let text: string
      try {
        text = readFileSync(s.history, 'utf8')
      } catch {
        return [] // a producer killed before its first send
      }
      // a line cut short by SIGKILL is dropped (its send's outcome is unknown either way)
      return text.split('\n').flatMap((l) => {
        try {
          return l ? [JSON.parse(l) as CompactedEvent] : []
        } catch {
          return []
        }
      })
    })
  const { read, last } = await readAll(kafka, topic)
  const violations = checkCompacted(events, read, last)
  const acks = events.filter((e) => e.k === 'ack').length
  log(`${events.length - acks} sends attempted, ${acks} acknowledged; read ${read.length} records; ${violations.length} violations`)
  for (const v of violations.slice(0, 20)) log(`VIOLATION ${v.kind} ${v.key ?? ''}: ${v.detail}`)
  log(`history: ${dir}`)
  server.stop()
  process.exit(violations.length > 0 ? 1 : 0)
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(__filename)) {
  main().catch((e) => {
    console.error('compacted torture run failed:', e)
    process.exit(2)
  })
}
