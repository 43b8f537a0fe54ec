// One consumer group member in its own process (forked by bench/lib/workers.ts, talking over IPC).
//   parent → child: { type: 'go' } resume and start counting, { type: 'stop' } disconnect, report and exit
//   child → parent: 'joined' (every GROUP_JOIN, with the assignment), 'progress' (every 50 ms), 'done'
// The member pauses the topic on its first join, so the group can settle before the timed part starts.
import type { Consumer, EachBatchPayload, EachMessagePayload, KafkaMessage } from 'kafkajs'
import { makeKafka, type Target } from './lib/target.js'

export interface WorkerConfig {
  target: Target
  topic: string
  groupId: string
  mode: 'eachMessage' | 'eachBatch'
  /** read the send time (float64 ms, first 8 bytes of the value) and collect produce-to-handler latencies */
  latency: boolean
  /** start paused; the parent resumes all members at once with 'go' */
  gated: boolean
  maxWaitTimeInMs?: number
}

export type WorkerMessage =
  | { type: 'joined'; assignment: Record<string, number[]> }
  | { type: 'progress'; count: number; maxOffsets: Record<number, number>; firstAt: number; lastAt: number; rssPeak: number }
  | {
      type: 'done'
      count: number
      maxOffsets: Record<number, number>
      firstAt: number
      lastAt: number
      rssPeak: number
      latencies: number[]
      /** this process's CPU time (ms) from the first delivery to the last progress report, and the deliveries in it */
      cpuMs: number
      cpuMessages: number
      error?: string
    }

const config = JSON.parse(process.env.BENCH_WORKER ?? 'null') as WorkerConfig | null
if (!config || !process.send) throw new Error('bench/worker.ts is started by bench/lib/workers.ts')

const send = (m: WorkerMessage) => process.send!(m)
const now = () => performance.timeOrigin + performance.now()

let count = 0
let firstAt = 0
let lastAt = 0
let rssPeak = process.memoryUsage().rss
const maxOffsets: Record<number, number> = {}
const latencies: number[] = []
let consumer: Consumer | undefined
let joined = false
let error: string | undefined

const sampleRss = () => {
  const rss = process.memoryUsage().rss
  if (rss > rssPeak) rssPeak = rss
}
setInterval(sampleRss, 50).unref()

const cpuNow = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
let cpuAtFirst = 0
let countAtFirst = 0
let cpuAtReport = 0
let countAtReport = 0
const started = (n: number) => {
  cpuAtFirst = cpuNow()
  countAtFirst = n
}

let reported = -1
const report = () => {
  if (count === reported) return
  reported = count
  cpuAtReport = cpuNow()
  countAtReport = count
  send({ type: 'progress', count, maxOffsets, firstAt, lastAt, rssPeak })
}
const progressTimer = setInterval(report, 50)

function seen(partition: number, message: KafkaMessage, at: number): void {
  const offset = Number(message.offset)
  if (!(offset <= maxOffsets[partition]!)) maxOffsets[partition] = offset
  if (config!.latency && message.value && message.value.length >= 8) {
    // only values the latency producer stamped (the warm-up message is all zeros)
    const sent = message.value.readDoubleLE(0)
    if (sent > 1e12 && sent <= at + 1000) latencies.push(at - sent)
  }
}

async function main(c: WorkerConfig): Promise<void> {
  const kafka = makeKafka(c.target, `bench-worker-${process.pid}`)
  consumer = kafka.consumer({ groupId: c.groupId, maxWaitTimeInMs: c.maxWaitTimeInMs })
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    if (c.gated && !joined) consumer!.pause([{ topic: c.topic }])
    joined = true
    send({ type: 'joined', assignment: payload.memberAssignment as Record<string, number[]> })
  })
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    error = `consumer crashed: ${payload.error.message}`
  })
  await consumer.connect()
  await consumer.subscribe({ topic: c.topic, fromBeginning: true })
  const eachMessage = async ({ partition, message }: EachMessagePayload) => {
    const at = now()
    if (count === 0) {
      firstAt = at
      started(1)
    }
    count++
    lastAt = at
    seen(partition, message, at)
  }
  const eachBatch = async ({ batch }: EachBatchPayload) => {
    const at = now()
    if (count === 0 && batch.messages.length > 0) {
      firstAt = at
      started(batch.messages.length)
    }
    count += batch.messages.length
    lastAt = at
    for (const m of batch.messages) seen(batch.partition, m, at)
    sampleRss()
  }
  await consumer.run(c.mode === 'eachMessage' ? { eachMessage } : { eachBatch })
}

process.on('message', (m: { type: string }) => {
  if (m.type === 'go') consumer?.resume([{ topic: config.topic }])
  if (m.type === 'stop') void stop()
})

async function stop(): Promise<void> {
  clearInterval(progressTimer)
  await consumer?.disconnect().catch((e: Error) => (error ??= `disconnect: ${e.message}`))
  sampleRss()
  const cpuMs = countAtReport > countAtFirst ? cpuAtReport - cpuAtFirst : 0
  const cpuMessages = countAtReport - countAtFirst
  // exit only once the report is out (a large one, with latencies, takes a while to flush)
  process.send!({ type: 'done', count, maxOffsets, firstAt, lastAt, rssPeak, latencies, cpuMs, cpuMessages, error } satisfies WorkerMessage, () =>
    process.exit(0),
  )
}

main(config).catch((e: Error) => {
  error = `worker failed: ${e.stack ?? e.message}`
  void stop()
})
