// A member joining while the leader is inside a long batch (KafkaJS semantics): the leader's payload.heartbeat()
// throws REBALANCE_IN_PROGRESS, what it resolved is committed, the consumer rejoins without crashing, and the
// newcomer gets its share then rather than after the leader's whole round. Before, the leader rebalanced only
// between fetch rounds: a newcomer waited for every batch of the round (the fault suite's mid-batch SIGKILL test
// could not even find a batch to kill the victim in).
import { describe, expect, it } from 'vitest'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('rebalance_in_batch')

const PER_PARTITION = 30

describe('a member joining while the leader is in a batch', () => {
  it("the leader's heartbeat() throws REBALANCE_IN_PROGRESS, it rejoins without crashing, nothing is handled twice", async () => {
    const topic = await t.createTopic(2)
    const groupId = uniqueName('g')
    const producer = await t.producer()
    const sent = [0, 1].flatMap((partition) => Array.from({ length: PER_PARTITION }, (_, i) => ({ value: `p${partition}-${i}`, partition })))
    await producer.send({ topic, messages: sent })

    const handled: Array<{ member: string; value: string }> = []
    const thrown: string[] = []
    const crashes: unknown[] = []
    let allHandled!: () => void
    const done = new Promise<void>((r) => (allHandled = r))
    let leaderInBatch!: () => void
    const inBatch = new Promise<void>((r) => (leaderInBatch = r))
    const member = async (name: string) => {
      const c = await t.consumer({ groupId, sessionTimeout: 6000, heartbeatInterval: 100 })
      c.on(c.events.CRASH, (e) => crashes.push(e.payload.error))
      await c.subscribe({ topic, fromBeginning: true })
      await c.run({
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch, resolveOffset, heartbeat, isStale }) => {
          for (const m of batch.messages) {
            if (isStale()) break
            handled.push({ member: name, value: m.value!.toString() })
            if (new Set(handled.map((h) => h.value)).size === sent.length) allHandled()
            // a slow message, so the round is long (the time is the point of the test, not a wait)
            await new Promise((r) => setTimeout(r, 50))
            resolveOffset(m.offset)
            leaderInBatch()
            try {
              await heartbeat()
            } catch (e) {
              thrown.push(`${name}:${(e as { type?: string }).type}`)
              throw e
            }
          }
        },
      })
    }
    await member('leader')
    await inBatch
    await member('newcomer')
    await done

    expect(thrown).toContain('leader:REBALANCE_IN_PROGRESS')
    expect(crashes).toEqual([])
    expect(handled.some((h) => h.member === 'newcomer')).toBe(true)
    // resolved messages were committed before the rejoin: no message was handled twice
    const values = handled.map((h) => h.value)
    expect(values.length).toBe(new Set(values).size)
  }, 60_000)
})
