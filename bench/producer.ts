// One producer in its own process (forked by bench/lib/producers.ts, talking over IPC), for the scaling table's
// producer-process counts and for the background load beside the latency producer.
//   parent → child: { type: 'go' } start sending, { type: 'stop' } stop a fixed-rate run, report and exit
//   child → parent: 'ready' (connected and warmed up), 'done' (messages, first and last send, CPU)
// Each send goes to one partition (partition `index + k` for the k-th send, modulo `partitions`): a batch per
// partition, as Kafka's sticky partitioner makes them.
import type { Producer } from 'kafkajs'
import { runMaintenance } from '../src/maintenance/run.js'
import { contextOf } from '../src/ops/context.js'
import { messages, now } from './lib/produce.js'
import { makeKafka, type Target } from './lib/target.js'

export interface ProducerConfig {
  target: Target
  topic: string
  partitions: number
  index: number
  batch: number
  /** send this many messages one send at a time, then report */
  total?: number
  /** or: this many sends per second until 'stop' */
  sendsPerSecond?: number
  /** pgqueue: also run maintenance (vacuum included) back to back, a second apart, until done */
  maintenance?: boolean
}

export type ProducerMessage =
  { type: 'ready' } | { type: 'done'; messages: number; firstAt: number; lastAt: number; cpuMs: number; maintenanceRuns?: number; error?: string }

const config = JSON.parse(process.env.BENCH_PRODUCER ?? 'null') as ProducerConfig | null
if (!config || !process.send) throw new Error('bench/producer.ts is started by bench/lib/producers.ts')

let go: () => void
const started = new Promise<void>((resolve) => (go = resolve))
let stopping = false
process.on('message', (m: { type: string }) => {
  if (m.type === 'go') go()
  if (m.type === 'stop') stopping = true
})

async function run(c: ProducerConfig, p: Producer): Promise<Omit<Extract<ProducerMessage, { type: 'done' }>, 'type'>> {
  const batch = messages(c.batch)
  let sent = 0
  let k = 0
  const sendOne = async () => {
    const n = c.total === undefined ? c.batch : Math.min(c.batch, c.total - sent)
    const partition = (c.index + k++) % c.partitions
    await p.send({ topic: c.topic, acks: -1, messages: batch.slice(0, n).map((m) => ({ ...m, partition })) })
    sent += n
  }
  await sendOne() // warm-up: connections, statements
  process.send!({ type: 'ready' } satisfies ProducerMessage)
  await started
  sent = 0
  const u0 = process.cpuUsage()
  const firstAt = now()
  if (c.total !== undefined) {
    while (sent < c.total) await sendOne()
  } else {
    const every = 1000 / c.sendsPerSecond!
    for (let i = 0; !stopping; i++) {
      const due = firstAt + i * every
      if (due > now()) await new Promise((r) => setTimeout(r, due - now()))
      if (!stopping) await sendOne()
    }
  }
  const u = process.cpuUsage(u0)
  return { messages: sent, firstAt, lastAt: now(), cpuMs: (u.user + u.system) / 1000 }
}

/** Maintenance runs back to back (a second apart) while the producer sends: far more often than its hourly default. */
async function maintain(kafka: object): Promise<number> {
  await started
  const ctx = contextOf(kafka)
  let runs = 0
  while (ctx && !stopping) {
    await runMaintenance(ctx)
    runs++
    await new Promise((r) => setTimeout(r, 1000))
  }
  return runs
}

async function main(c: ProducerConfig) {
  const kafka = makeKafka(c.target, `bench-producer-${process.pid}`)
  const producer = kafka.producer()
  await producer.connect()
  try {
    const maintenance = c.maintenance ? maintain(kafka) : Promise.resolve(0)
    const r = await run(c, producer)
    stopping = true
    return { ...r, maintenanceRuns: await maintenance }
  } finally {
    await producer.disconnect()
  }
}

main(config).then(
  (r) => process.send!({ type: 'done', ...r } satisfies ProducerMessage, () => process.exit(0)),
  (e: unknown) =>
    process.send!(
      { type: 'done', messages: 0, firstAt: 0, lastAt: 0, cpuMs: 0, error: String((e as Error).stack ?? e) } satisfies ProducerMessage,
      () => process.exit(1),
    ),
)
