// A DataHub client in its own process (the role of a DataHub GMS / Python emitter or consumer next to this library).
// ROLE=produce: TOPIC, COUNT, BATCH (1 = enqueue per message, else enqueue_batch), KEYS, ID; waits for SIGUSR1
//   after printing `ready`, then prints `done <count>`. Payloads are `dh<ID>.<n>`, keys `dh<ID>k<n % KEYS>`.
// ROLE=consume: TOPIC, GROUP, MAX (per poll), VISIBILITY_S, PARTITIONS (comma list, default all), EMPTY_SLEEP_MS:
//   DataHub's poll loop (register, receive, handle, commit). Prints `ready` after its first poll, `m <partition>
//   <seq> <payload>` per handled message, `stuck <partition>` when an offset is past MAX(seq); runs until SIGTERM.
//   With HOLD set, it stops after its first non-empty poll without committing and prints `holding`.
import pg from 'pg'
import { DataHubQueue } from './queue.js'

const env = (name: string, fallback?: string): string => {
  const v = process.env[name] ?? fallback
  if (v === undefined) throw new Error(`missing ${name}`)
  return v
}

const pool = new pg.Pool({ connectionString: env('PG_URL'), max: 2 })
pool.on('error', () => {})
const queue = new DataHubQueue(pool, env('PG_SCHEMA'))
const out: string[] = []
const flush = () => {
  if (out.length > 0) process.stdout.write(out.splice(0).join('\n') + '\n')
}
setInterval(flush, 20).unref()

async function produce(): Promise<void> {
  const topic = env('TOPIC')
  const count = Number(env('COUNT'))
  const batch = Number(env('BATCH', '1'))
  const keys = Number(env('KEYS', '16'))
  const id = env('ID', '0')
  // the timer keeps the process alive while it waits (a pending promise alone does not)
  const hold = setInterval(() => {}, 60_000)
  const go = new Promise<void>((res) => process.once('SIGUSR1', () => (clearInterval(hold), res())))
  out.push('ready')
  flush()
  await go
  for (let n = 0; n < count; n += batch) {
    const items = Array.from({ length: Math.min(batch, count - n) }, (_, i) => ({
      routingKey: `dh${id}k${(n + i) % keys}`,
      payload: Buffer.from(`dh${id}.${n + i}`),
    }))
    if (items.length === 1) await queue.enqueue(topic, items[0])
    else await queue.enqueueBatch(topic, items)
  }
  out.push(`done ${count}`)
}

async function consume(): Promise<void> {
  const topic = env('TOPIC')
  const group = env('GROUP')
  const max = Number(env('MAX', '50'))
  const visibility = Number(env('VISIBILITY_S', '600'))
  const emptySleep = Number(env('EMPTY_SLEEP_MS', '100'))
  const owner = DataHubQueue.lockOwner(group)
  let stopping = false
  process.once('SIGTERM', () => (stopping = true))
  let first = true
  while (!stopping) {
    const row = await queue.topicRow(topic)
    if (row) {
      await queue.register(group, row.id)
      const partitions = process.env.PARTITIONS
        ? process.env.PARTITIONS.split(',').map(Number)
        : Array.from({ length: row.partitionCount }, (_, i) => i)
      const stuck: number[] = []
      const got = await queue.receiveBatchForGroup(group, row.id, partitions, owner, visibility, max, stuck)
      for (const p of stuck) out.push(`stuck ${p}`)
      for (const m of got) out.push(`m ${m.partitionId} ${m.seq} ${m.payload.toString()} ${m.mime ?? ''}`)
      if (got.length > 0 && process.env.HOLD) {
        // a handler that never returns: the leases stay until the visibility timeout (or a SIGKILL leaves them)
        out.push('holding')
        flush()
        await new Promise(() => setInterval(() => {}, 60_000))
      }
      if (got.length > 0) await queue.commitForGroup(group, got)
      if (first) out.push('ready')
      first = false
      if (got.length > 0) continue
    }
    await new Promise((r) => setTimeout(r, emptySleep)) // DataHub's empty-poll sleep
  }
}

const role = env('ROLE')
;(role === 'produce' ? produce() : consume())
  .then(async () => {
    flush()
    await pool.end()
    process.exit(0)
  })
  .catch((e: unknown) => {
    out.push(`fatal ${(e as Error).message.replace(/\s+/g, ' ')}`)
    flush()
    process.exit(1)
  })
