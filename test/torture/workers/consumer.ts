// A consumer process of one group: eachMessage or eachBatch with the options its spec drew (autoCommit,
// eachBatchAutoResolve, resolveOffset / commitOffsetsIfNecessary / commitOffsets in a drawn order, a partial batch,
// handlers slower than the session, pause / seek from inside a handler), and at random times pause/resume, a seek
// back to an offset it processed, stop/run, or leaving and joining again as a new member. Every handler entry and
// exit, every delivery, resolve and commit goes to the history. A dead-letter member wraps its handler (eachMessage
// or eachBatch, in place or through retry topics) with the public deadLetter API: poison messages fail every
// attempt and end on the dead-letter topic, the others are handled.
import type { Consumer, EachBatchHandler, EachBatchPayload, EachMessageHandler, EachMessagePayload, KafkaMessage } from 'kafkajs'
import { deadLetter } from '../../../src/deadLetter/index.js'
import { isPoison } from '../history.js'
import type { CommitStep, ConsumerSpec } from '../spec.js'
import { groupMember, sleep, startWorker } from './common.js'

const w = startWorker<ConsumerSpec>()
const { spec, rng, rec } = w
const g = spec.group
const draw = spec.draw
const dl = spec.deadLetter
  ? deadLetter(w.kafka, {
      groupId: g,
      topic: spec.deadLetter.topic,
      maxAttempts: spec.deadLetter.maxAttempts,
      backoff: { initialMs: 50, maxMs: 200 },
      mode: spec.deadLetter.mode,
    })
  : undefined
const subscribed = [...spec.subscribe, ...(dl && spec.deadLetter!.mode === 'retry-topics' ? spec.subscribe.flatMap((t) => dl.retryTopics(t)) : [])]
const covered = new Set<string>()
/** the coverage table: each option or path the first time this member exercises it */
function cover(name: string) {
  if (covered.has(name)) return
  covered.add(name)
  rec.record({ k: 'stat', name: `cover.${name}`, n: 1 })
}
let handlerId = 0
let consumer: Consumer
/** the last offset this member processed per partition (seek targets) */
const processedAt = new Map<string, bigint>()

async function work() {
  const r = rng.next()
  if (r < 0.02) await sleep(rng.int(100, 400))
  else if (r < 0.3) await sleep(rng.int(1, 10))
}

function delivered(topic: string, partition: number, m: KafkaMessage) {
  rec.record({ k: 'd', g, topic, partition, offset: m.offset, value: String(m.value) })
}

function processed(topic: string, partition: number, offset: string) {
  rec.record({ k: 'x', g, topic, partition, offset })
  processedAt.set(`${topic}/${partition}`, BigInt(offset))
}

/**
 * Now and then slower than the session (the lease lapses), then a heartbeat: the member may take its partition again.
 * Not while draining: drawn per message, it would stall nearly every batch and the drain could never finish.
 */
async function maybeSlow(heartbeat: () => Promise<void>) {
  if (!draw.slow || w.draining || !rng.chance(0.03)) return
  cover('handler slower than sessionTimeout')
  await sleep(Math.round(spec.sessionTimeoutMs * (1.2 + 0.5 * rng.next())))
  await w.track('heartbeat', () => heartbeat()).catch(() => undefined)
}

/** From inside a handler: pause the partition (resumed a little later) or seek back to an offset processed. */
function maybeMidBatch(topic: string, partition: number, pause: () => () => void) {
  if (!draw.midBatch || w.draining || !rng.chance(0.02)) return
  if (spec.ops.includes('seek') && rng.chance(0.5)) {
    const last = processedAt.get(`${topic}/${partition}`)
    if (last === undefined) return
    const back = last - BigInt(rng.int(0, 5))
    const offset = (back < 0n ? 0n : back).toString()
    cover('seek mid-batch')
    consumer.seek({ topic, partition, offset })
    rec.record({ k: 'seek', g, topic, partition, offset })
    return
  }
  cover('pause/resume mid-batch')
  const resume = pause()
  setTimeout(() => resume(), rng.int(50, 800))
}

const nextOffset = (offset: string) => (BigInt(offset) + 1n).toString()

async function eachMessage({ topic, partition, message, heartbeat, pause }: EachMessagePayload) {
  const h = handlerId++
  rec.record({ k: 'he', g, topic, partition, h })
  try {
    delivered(topic, partition, message)
    await work()
    await maybeSlow(heartbeat)
    processed(topic, partition, message.offset)
    if (draw.steps.includes('commitOffsets')) {
      cover(`eachMessage commitOffsets (autoCommit ${draw.autoCommit ? 'on' : 'off'})`)
      // what is stored is checked through the COMMIT_OFFSETS event and the poll: a commit may be clamped
      await w.track('commitOffsets', () => consumer.commitOffsets([{ topic, partition, offset: nextOffset(message.offset) }]))
    }
    maybeMidBatch(topic, partition, pause)
  } finally {
    rec.record({ k: 'hl', h })
  }
}

/** The application's handler under deadLetter(): a poison message throws on every attempt. */
const deadLettering: EachMessageHandler | undefined = dl?.eachMessage(async ({ topic, partition, message, heartbeat }) => {
  if (isPoison(String(message.value))) throw new Error(`poison message ${String(message.value)}`)
  await work()
  await maybeSlow(heartbeat)
  processed(topic, partition, message.offset)
})

/** One delivery (whatever the attempts inside): handled, or moved to the dead-letter topic, when it returns. */
async function eachDeadLettered(payload: EachMessagePayload) {
  const { topic, partition, message } = payload
  const h = handlerId++
  rec.record({ k: 'he', g, topic, partition, h })
  try {
    delivered(topic, partition, message)
    await deadLettering!(payload)
  } finally {
    rec.record({ k: 'hl', h })
  }
}

/** The batch handler under deadLetter(): resolves what it handled; a poison message throws (the first unresolved). */
const deadLetteringBatch: EachBatchHandler | undefined = dl?.eachBatch(async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
  const { topic, partition } = batch
  const take = draw.partial ? rng.int(1, batch.messages.length) : batch.messages.length
  for (const message of batch.messages.slice(0, take)) {
    // only a handler whose batch is not auto-resolved may stop early: under auto-resolve returning means all handled
    if (draw.partial && (!isRunning() || isStale())) break
    delivered(topic, partition, message)
    if (isPoison(String(message.value))) throw new Error(`poison message ${String(message.value)}`)
    await work()
    await maybeSlow(heartbeat)
    processed(topic, partition, message.offset)
    resolveOffset(message.offset)
  }
  if (take < batch.messages.length) cover(`deadLetter eachBatch partial (autoResolve ${draw.autoResolve ? 'on' : 'off'})`)
})

async function eachDeadLetteredBatch(payload: EachBatchPayload) {
  const { topic, partition } = payload.batch
  const h = handlerId++
  rec.record({ k: 'he', g, topic, partition, h })
  try {
    await deadLetteringBatch!(payload)
  } finally {
    rec.record({ k: 'hl', h })
  }
}

async function commitStep(step: CommitStep, p: EachBatchPayload, message: KafkaMessage) {
  const { topic, partition } = p.batch
  const offsets = { topics: [{ topic, partitions: [{ partition, offset: nextOffset(message.offset) }] }] }
  switch (step) {
    case 'resolve':
      return p.resolveOffset(message.offset)
    case 'ifNecessary':
      return w.track('commitOffsetsIfNecessary', () => p.commitOffsetsIfNecessary())
    case 'ifNecessaryOffsets':
      return w.track('commitOffsetsIfNecessary(offsets)', () => p.commitOffsetsIfNecessary(offsets))
    case 'commitOffsets':
      return w.track('commitOffsets', () => consumer.commitOffsets(offsets.topics.map((t) => ({ topic, ...t.partitions[0] }))))
  }
}

async function eachBatch(p: EachBatchPayload) {
  const { batch, heartbeat, isRunning, isStale, pause } = p
  const { topic, partition } = batch
  const h = handlerId++
  rec.record({ k: 'he', g, topic, partition, h })
  try {
    // a partial handler handles a prefix and returns: the rest must come again (unless auto-resolved)
    const take = draw.partial ? rng.int(1, batch.messages.length) : batch.messages.length
    for (const message of batch.messages.slice(0, take)) {
      if (draw.partial && (!isRunning() || isStale())) break
      delivered(topic, partition, message)
      await work()
      await maybeSlow(heartbeat)
      processed(topic, partition, message.offset)
      // the drawn order of resolveOffset / commitOffsetsIfNecessary / commitOffsets, now and then a step skipped
      for (const step of draw.steps) if (rng.chance(0.7)) await commitStep(step, p, message)
      if (rng.chance(0.3)) await w.track('heartbeat', () => heartbeat())
      maybeMidBatch(topic, partition, pause)
    }
    if (take < batch.messages.length) cover(`eachBatch partial (autoResolve ${draw.autoResolve ? 'on' : 'off'})`)
  } finally {
    rec.record({ k: 'hl', h })
  }
}

function newConsumer(): Consumer {
  const c = groupMember(w, g)
  c.on(c.events.COMMIT_OFFSETS, ({ payload }) => {
    for (const t of payload.topics)
      for (const p of t.partitions) rec.record({ k: 'c', g, topic: t.topic, partition: Number(p.partition), offset: String(p.offset), src: 'event' })
  })
  return c
}

async function start() {
  consumer = newConsumer()
  await w.track('connect', () => consumer.connect())
  for (const topic of subscribed) await w.track('subscribe', () => consumer.subscribe({ topic, fromBeginning: true }))
  rec.record({ k: 'sub', g, topics: subscribed })
  await run()
}

function announce() {
  cover(`autoCommit ${draw.autoCommit ? 'on' : 'off'}`)
  if (spec.concurrency > 1) cover('partitionsConsumedConcurrently > 1')
  if (spec.deadLetter) cover(`deadLetter ${spec.deadLetter.mode} around each${spec.deadLetter.around === 'batch' ? 'Batch' : 'Message'}`)
  if (spec.handler.startsWith('batch')) {
    cover(`eachBatchAutoResolve ${draw.autoResolve ? 'on' : 'off'}`)
    if (!spec.deadLetter && draw.steps.length > 0) cover(`eachBatch steps ${draw.steps.join(' > ')}`)
  }
}

const run = () => {
  announce()
  const common = { autoCommit: draw.autoCommit, partitionsConsumedConcurrently: spec.concurrency }
  return w.track('run', () =>
    dl
      ? spec.deadLetter!.around === 'batch'
        ? consumer.run({ ...common, eachBatchAutoResolve: draw.autoResolve, eachBatch: eachDeadLetteredBatch })
        : consumer.run({ ...common, eachMessage: eachDeadLettered })
      : spec.handler.startsWith('message')
        ? consumer.run({ ...common, eachMessage })
        : consumer.run({ ...common, eachBatchAutoResolve: draw.autoResolve, eachBatch }),
  )
}

async function chaos() {
  const op = rng.pick(spec.ops)
  switch (op) {
    case 'pause': {
      const topic = rng.pick(spec.subscribe)
      consumer.pause([{ topic }])
      await sleep(rng.int(100, 1500))
      if (!w.draining) consumer.resume([{ topic }])
      return
    }
    case 'seek': {
      const known = [...processedAt]
      if (known.length === 0) return
      const [tp, last] = rng.pick(known)
      const [topic, partition] = [tp.slice(0, tp.lastIndexOf('/')), Number(tp.slice(tp.lastIndexOf('/') + 1))]
      // back, never forward: a replay, not a skip
      const back = last - BigInt(rng.int(0, 5))
      const offset = (back < 0n ? 0n : back).toString()
      consumer.seek({ topic, partition, offset })
      rec.record({ k: 'seek', g, topic, partition, offset })
      return
    }
    case 'restart':
      await w.track('stop', () => consumer.stop())
      await sleep(rng.int(50, 500))
      await run()
      return
    case 'rejoin':
      await w.track('disconnect', () => consumer.disconnect())
      await sleep(rng.int(100, 1000))
      await start()
      return
  }
}

async function main() {
  if (dl) await w.track('deadLetter.connect', () => dl.connect())
  await start()
  w.ready()
  w.onDrain(() => {
    // a consumer between a rejoin's disconnect and its run() is not running: KafkaJS's resume throws then (it
    // crashed c1.7 of seed 20261204 at the drain); the next run() starts unpaused anyway
    for (const topic of subscribed) {
      try {
        consumer.resume([{ topic }])
      } catch (e) {
        w.recordError('drain.resume', e)
      }
    }
  })
  // dl.disconnect() ends a wait between attempts at once (the message stays uncommitted, for the next owner)
  w.onStop(() => Promise.all([consumer.disconnect(), dl?.disconnect()]).then(() => undefined))
  while (!w.stopping && !w.draining && spec.ops.length > 0) {
    await sleep(rng.int(500, 3000))
    if (w.stopping || w.draining) break
    await chaos().catch((e) => w.recordError('chaos', e))
  }
  // a pause still running when the drain began is lifted here too
  for (const topic of subscribed) consumer.resume([{ topic }])
}

main().catch((e) => {
  w.recordError('main', e)
  process.exit(1)
})
