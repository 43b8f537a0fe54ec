// A consumer process of one group: eachMessage (auto or manual commits) or eachBatch (auto-resolve, or partial
// resolves with heartbeat and commitOffsetsIfNecessary), and at random times pause/resume, a seek back to an
// offset it processed, stop/run, or leaving and joining again as a new member. Every handler entry and exit, every
// delivery, resolve and commit goes to the history. A dead-letter member wraps its handler with the public
// deadLetter API: poison messages fail every attempt and end on the dead-letter topic, the others are handled.
import type { Consumer, EachBatchPayload, EachMessageHandler, EachMessagePayload, KafkaMessage } from 'kafkajs'
import { deadLetter } from '../../../src/deadLetter/index.js'
import { isPoison } from '../history.js'
import type { ConsumerSpec } from '../spec.js'
import { groupMember, sleep, startWorker } from './common.js'

const w = startWorker<ConsumerSpec>()
const { spec, rng, rec } = w
const g = spec.group
const dl = spec.deadLetter
  ? deadLetter(w.kafka, {
      groupId: g,
      topic: spec.deadLetter.topic,
      maxAttempts: spec.deadLetter.maxAttempts,
      backoff: { initialMs: 50, maxMs: 200 },
    })
  : undefined
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

async function eachMessage({ topic, partition, message }: EachMessagePayload) {
  const h = handlerId++
  rec.record({ k: 'he', g, topic, partition, h })
  try {
    delivered(topic, partition, message)
    await work()
    processed(topic, partition, message.offset)
    if (spec.handler === 'message-manual') {
      const offset = (BigInt(message.offset) + 1n).toString()
      // what is stored is checked through the COMMIT_OFFSETS event and the poll: a commit may be clamped
      await w.track('commitOffsets', () => consumer.commitOffsets([{ topic, partition, offset }]))
    }
  } finally {
    rec.record({ k: 'hl', h })
  }
}

/** The application's handler under deadLetter(): a poison message throws on every attempt. */
const deadLettering: EachMessageHandler | undefined = dl?.eachMessage(async ({ topic, partition, message }) => {
  if (isPoison(String(message.value))) throw new Error(`poison message ${String(message.value)}`)
  await work()
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

async function eachBatch({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }: EachBatchPayload) {
  const { topic, partition } = batch
  const h = handlerId++
  rec.record({ k: 'he', g, topic, partition, h })
  try {
    const partial = spec.handler === 'batch-partial'
    // a partial handler resolves a prefix and returns: the rest must come again
    const take = partial ? rng.int(1, batch.messages.length) : batch.messages.length
    for (const message of batch.messages.slice(0, take)) {
      if (partial && (!isRunning() || isStale())) break
      delivered(topic, partition, message)
      await work()
      processed(topic, partition, message.offset)
      if (partial) resolveOffset(message.offset)
      if (rng.chance(0.3)) await w.track('heartbeat', () => heartbeat())
      if (partial && rng.chance(0.3)) await w.track('commitOffsetsIfNecessary', () => commitOffsetsIfNecessary())
    }
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
  for (const topic of spec.subscribe) await w.track('subscribe', () => consumer.subscribe({ topic, fromBeginning: true }))
  rec.record({ k: 'sub', g, topics: spec.subscribe })
  await run()
}

const run = () =>
  w.track('run', () =>
    dl
      ? consumer.run({ partitionsConsumedConcurrently: spec.concurrency, eachMessage: eachDeadLettered })
      : spec.handler.startsWith('message')
        ? consumer.run({ autoCommit: spec.handler !== 'message-manual', partitionsConsumedConcurrently: spec.concurrency, eachMessage })
        : consumer.run({ eachBatchAutoResolve: spec.handler === 'batch', partitionsConsumedConcurrently: spec.concurrency, eachBatch }),
  )

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
    for (const topic of spec.subscribe) consumer.resume([{ topic }])
  })
  // dl.disconnect() ends a wait between attempts at once (the message stays uncommitted, for the next owner)
  w.onStop(() => Promise.all([consumer.disconnect(), dl?.disconnect()]).then(() => undefined))
  while (!w.stopping && !w.draining && spec.ops.length > 0) {
    await sleep(rng.int(500, 3000))
    if (w.stopping || w.draining) break
    await chaos().catch((e) => w.recordError('chaos', e))
  }
  // a pause still running when the drain began is lifted here too
  for (const topic of spec.subscribe) consumer.resume([{ topic }])
}

main().catch((e) => {
  w.recordError('main', e)
  process.exit(1)
})
