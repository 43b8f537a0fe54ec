// The dead-letter move on pgQueue is one transaction (the dead-letter send and the offset commit): a consumer
// SIGKILLed again and again while it retries and dead-letters poison messages never loses one and never
// dead-letters one twice; every healthy message is still handled. In retry-topics mode every hop is such a move
// too: each poison message is in each retry topic exactly once.
import { describe, expect, it } from 'vitest'
import { tablesFor } from '../../src/db/tables.js'
import { waitFor } from '../helpers/db.js'
import { uniqueName, useTestKafka } from '../helpers/kafka.js'
import { spawnFixture, type Child } from '../helpers/processes.js'
import { sleep } from './support.js'

const t = useTestKafka('fault_dead_letter')

describe('dead-letter move under SIGKILL', () => {
  // the two modes side by side: each is mostly waits for a killed worker's leases to lapse (~80 s of the fault
  // suite's ~300 s each, one after the other), on topics and groups of its own
  it.concurrent.each(['blocking', 'retry-topics'])(
    '%s: each poison message lands in the dead-letter topic exactly once, no healthy message is lost',
    async (mode) => {
      const topic = await t.createTopic(2, 'dlq_kill')
      const dlq = await t.createTopic(1, 'dlq_kill_dead')
      const retryTopics = mode === 'retry-topics' ? [`${topic}.retry-1`, `${topic}.retry-2`] : []
      const admin = t.kafka.admin()
      await admin.connect()
      await admin.createTopics({ topics: retryTopics.map((name) => ({ topic: name, numPartitions: 1 })) })
      await admin.disconnect()
      const group = uniqueName('dlq_kill_group')
      const TOTAL = 400
      const values = Array.from({ length: TOTAL }, (_, n) => (n % 20 === 7 ? `poison-${n}` : `ok-${n}`))
      const producer = await t.producer()
      await producer.send({ topic, messages: values.map((value, n) => ({ key: `k${n % 6}`, value })) })
      const env = { PG_URL: t.db.connectionString, PG_SCHEMA: t.db.schema, TOPIC: topic, GROUP: group, DLQ: dlq, MODE: mode }

      const children: Child[] = []
      const handledValues = () => new Set(children.flatMap((c) => c.lines.filter((l) => l.startsWith('h ')).map((l) => l.slice(2))))
      // kill a worker at a random moment after it has started working, several times over
      let kills = 0
      for (let round = 0; round < 6; round++) {
        const child = spawnFixture('deadLetterConsumer.ts', env)
        children.push(child)
        await child.waitForLine((l) => l === 'ready')
        // the kill is the fault, not a check: a worker given no work within 20 s (leases still held) is killed anyway
        await child.waitForLine((l) => l.startsWith('h ') || l.startsWith('d '), 20_000).catch(() => undefined)
        // not synchronisation: the kill lands at a random moment of its work
        await sleep(50 + Math.floor(Math.random() * 400))
        child.proc.kill('SIGKILL')
        await child.exited
        kills++
      }
      const last = spawnFixture('deadLetterConsumer.ts', env)
      children.push(last)
      const tb = tablesFor(t.db.schema, 'metadata_queue')
      const copies = async (name: string) =>
        (
          await t.db.pool.query<{ value: string; n: number }>(
            `SELECT convert_from(payload, 'UTF8') AS value, count(*)::int AS n FROM ${tb.message} m
           JOIN ${tb.topic} tp ON tp.id = m.topic_id WHERE tp.topic_name = $1 GROUP BY 1`,
            [name],
          )
        ).rows
      const dead = () => copies(dlq)
      const poison = values.filter((v) => v.startsWith('poison'))
      const healthy = values.filter((v) => !v.startsWith('poison'))
      await waitFor(async () => (await dead()).length >= poison.length && healthy.every((v) => handledValues().has(v)), {
        timeout: 60_000,
        interval: 100,
        what: `all ${poison.length} poison messages dead-lettered and all ${healthy.length} healthy ones handled`,
      })
      last.proc.kill('SIGTERM')
      await last.exited

      const rows = await dead()
      const twice = rows.filter((r) => r.n > 1)
      const missingDead = poison.filter((v) => !rows.some((r) => r.value === v))
      const lost = healthy.filter((v) => !handledValues().has(v))
      console.log(
        `dead-letter (${mode}) under ${kills} SIGKILLs: ${rows.length}/${poison.length} poison messages dead-lettered, ${twice.length} twice; ${healthy.length - lost.length}/${healthy.length} healthy handled`,
      )
      for (const name of retryTopics) {
        const hops = await copies(name)
        expect(hops.map((r) => [r.value, r.n]).sort()).toEqual(poison.map((v) => [v, 1]).sort())
      }
      expect(twice).toEqual([])
      expect(missingDead).toEqual([])
      expect(lost).toEqual([])
      expect(rows.every((r) => r.value.startsWith('poison'))).toBe(true)
    },
    150_000,
  )
})
