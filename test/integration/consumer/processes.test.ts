// Consumer groups across real processes: partitions shared without loss or overlap, and a SIGKILLed member's
// uncommitted work redelivered to the survivors.
import { describe, expect, it } from 'vitest'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'
import { spawnFixture, type Child } from '../../helpers/processes.js'

const t = useTestKafka('consumer_processes')

interface Handled {
  value: string
  offset: number
  partition: number
  start: number
  end: number
  worker: number
}

function handled(children: Child[]): Handled[] {
  return children.flatMap((c, worker) =>
    c.lines
      .filter((l) => l.startsWith('m '))
      .map((l) => {
        const [, value, offset, partition, start, end] = l.split(' ')
        return { value, offset: Number(offset), partition: Number(partition), start: Number(start), end: Number(end), worker }
      }),
  )
}

async function setup(partitions: number) {
  const topic = await t.createTopic(partitions, 'proc')
  const producer = await t.producer()
  const group = uniqueName('g')
  const env = { PG_URL: t.db.connectionString, PG_SCHEMA: t.db.schema, TOPIC: topic, GROUP: group }
  return { topic, producer, env }
}

async function produceKeyed(producer: Awaited<ReturnType<typeof t.producer>>, topic: string, total: number, keys: number) {
  for (let sent = 0; sent < total; sent += 1000) {
    await producer.send({
      topic,
      messages: Array.from({ length: Math.min(1000, total - sent) }, (_, i) => {
        const n = sent + i
        return { key: `key-${n % keys}`, value: `key-${n % keys}:${n}` }
      }),
    })
  }
}

/** Within each key, the first delivery of every message must come in production order. */
function orderViolations(all: Handled[]): number {
  const byKey = new Map<string, Handled[]>()
  for (const h of [...all].sort((a, b) => a.start - b.start || a.end - b.end)) {
    const key = h.value.split(':')[0]
    byKey.set(key, [...(byKey.get(key) ?? []), h])
  }
  let violations = 0
  for (const list of byKey.values()) {
    let highest = -1
    const firstSeen = new Set<string>()
    for (const h of list) {
      if (firstSeen.has(h.value)) continue // a redelivery after a takeover replays older messages
      firstSeen.add(h.value)
      const n = Number(h.value.split(':')[1])
      if (n < highest) violations++
      highest = Math.max(highest, n)
    }
  }
  return violations
}

describe('consumer groups across processes', () => {
  it('four processes share 8 partitions: every message handled, never by two at once, order per key kept', async () => {
    const { topic, producer, env } = await setup(8)
    const workers = [0, 1, 2, 3].map(() => spawnFixture('consumerWorker.ts', env))
    await Promise.all(workers.map((w) => w.waitForLine((l) => l === 'ready')))
    await produceKeyed(producer, topic, 20_000, 200)
    const deadline = Date.now() + 90_000
    while (new Set(handled(workers).map((h) => h.value)).size < 20_000 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100))
    }
    for (const w of workers) w.proc.kill('SIGTERM')
    await Promise.all(workers.map((w) => w.exited))
    const all = handled(workers)
    const unique = new Set(all.map((h) => h.value))
    expect(unique.size).toBe(20_000)
    // the same message never in two handlers at overlapping times
    const byValue = new Map<string, Handled[]>()
    for (const h of all) byValue.set(h.value, [...(byValue.get(h.value) ?? []), h])
    let overlaps = 0
    for (const list of byValue.values()) {
      for (let i = 0; i < list.length; i++)
        for (let j = i + 1; j < list.length; j++)
          if (list[i].worker !== list[j].worker && list[i].start < list[j].end && list[j].start < list[i].end) overlaps++
    }
    expect(overlaps).toBe(0)
    expect(orderViolations(all)).toBe(0)
    const duplicates = all.length - unique.size
    console.log(
      `4 processes, 20000 messages: ${duplicates} duplicate deliveries, per worker ${workers.map((_, i) => all.filter((h) => h.worker === i).length).join('/')}`,
    )
  }, 120_000)

  it('a SIGKILLed member: its uncommitted messages go to the survivor, committed ones are not redelivered', async () => {
    const { topic, producer, env } = await setup(4)
    const victim = spawnFixture('consumerWorker.ts', { ...env, HANDLER_DELAY_MS: '2' })
    await victim.waitForLine((l) => l === 'ready')
    const survivor = spawnFixture('consumerWorker.ts', { ...env, HANDLER_DELAY_MS: '2' })
    await survivor.waitForLine((l) => l === 'ready')
    await produceKeyed(producer, topic, 2000, 40)
    // kill once the victim has committed something and is mid-stream
    await victim.waitForLine((l) => l.startsWith('c '))
    victim.proc.kill('SIGKILL')
    await victim.exited
    const committedByVictim = new Map<number, number>()
    for (const l of victim.lines.filter((x) => x.startsWith('c '))) {
      const [, p, o] = l.split(' ')
      committedByVictim.set(Number(p), Math.max(committedByVictim.get(Number(p)) ?? 0, Number(o)))
    }
    const deadline = Date.now() + 60_000
    const done = () => new Set(handled([victim, survivor]).map((h) => h.value)).size === 2000
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    survivor.proc.kill('SIGTERM')
    await survivor.exited
    const all = handled([victim, survivor])
    expect(new Set(all.map((h) => h.value)).size).toBe(2000)
    // nothing the victim committed comes back to the survivor
    const replayedCommitted = handled([survivor]).filter(
      (h) => h.offset < (committedByVictim.get(h.partition) ?? 0) && handled([victim]).some((v) => v.value === h.value),
    )
    expect(replayedCommitted).toEqual([])
    expect(orderViolations(all)).toBe(0)
  }, 120_000)
})
