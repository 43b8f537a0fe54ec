// consumer.commitOffsets / commitOffsetsIfNecessary(offsets) of a message handed out before the member's own lease
// lapsed and was taken again (a handler slower than sessionTimeout, then heartbeat()): the member restarted the
// partition from the committed offset meanwhile, and its fresh state took the commit for a skip ahead, moving every
// priority to that offset, so the older, less urgent messages priority order had passed over were never handed out
// to anyone (issue 34 item 1). The consumer runs in its own process; its handler really sleeps past the session.
import { describe, expect, it } from 'vitest'
import { waitFor } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'
import { spawnFixture } from '../../helpers/processes.js'

const t = useTestKafka('reacquired_commit')
const normal = Array.from({ length: 5 }, (_, i) => `n${i}`)

describe.each(['commitOffsets', 'ifNecessary'])('a manual commit after the lease lapsed and was taken again (%s)', (how) => {
  it('keeps the less urgent messages never handed out for the next member', async () => {
    const topic = await t.createTopic(1)
    const group = uniqueName('g')
    const producer = await t.producer()
    await producer.send({
      topic,
      messages: [...normal.map((value) => ({ value, partition: 0, priority: 5 })), { value: 'urgent', partition: 0, priority: 0 }] as never[],
    })
    const child = spawnFixture('slowCommitConsumer.ts', {
      PG_URL: t.db.connectionString,
      PG_SCHEMA: t.db.schema,
      TOPIC: topic,
      GROUP: group,
      SESSION_MS: '1000',
      HOW: how,
    })
    const outcome = await child.waitForLine((l) => l === 'committed' || l.startsWith('refused'))
    expect(child.lines.filter((l) => l.startsWith('h '))[0]).toBe('h urgent')
    child.proc.kill('SIGKILL')
    await child.exited

    const handled: string[] = []
    const next = await t.consumer({ groupId: group })
    await next.subscribe({ topic, fromBeginning: true })
    await next.run({ eachMessage: async ({ message }) => void handled.push(message.value!.toString()) })
    // before the fix: the commit stored offset 6 for every priority and this timed out with nothing handled
    await waitFor(() => normal.every((v) => handled.includes(v)), { what: `the less urgent messages (${outcome})`, timeout: 15_000 })
    expect(handled).not.toContain('urgent')
  }, 45_000)
})
