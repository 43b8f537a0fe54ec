// Lease expiry under a slow handler: a member stuck in one message longer than its session timeout loses the
// partition; the other member redelivers that message once and carries on; the slow member's late commit must not
// move the group's committed offset (the watermark) backwards.
import { describe, expect, it } from 'vitest'
import { waitFor } from '../helpers/db.js'
import { uniqueName, useTestKafka } from '../helpers/kafka.js'
import { spawnFixture, type Child } from '../helpers/processes.js'
import { commits, handled, lineAfter, sleep, watchOffsets } from './support.js'

const t = useTestKafka('fault_lease')
const TOTAL = 10
const SLOW_MS = 7000

async function scenario(extra: Record<string, string>) {
  const topic = uniqueName('lease')
  const group = uniqueName('g')
  const producer = await t.producer()
  const admin = t.kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })
  await admin.disconnect()
  const env = {
    PG_URL: t.db.connectionString,
    PG_SCHEMA: t.db.schema,
    TOPIC: topic,
    GROUP: group,
    SESSION_TIMEOUT: '3000',
    HEARTBEAT: '300',
    ...extra,
  }
  const watcher = watchOffsets(t.db.connectionString, t.db.schema, 'metadata_queue', group, 50)
  const slow = spawnFixture('faultConsumer.ts', { ...env, SLOW_VALUE: 'v-3', SLOW_MS: String(SLOW_MS) })
  await slow.waitForLine((l) => l === 'ready')
  await producer.send({ topic, messages: Array.from({ length: TOTAL }, (_, n) => ({ value: `v-${n}`, partition: 0 })) })
  await lineAfter(slow, 0, (l) => l.startsWith('slow v-3 '))
  const other = spawnFixture('faultConsumer.ts', env)
  // the slow handler ends, and whatever it does next has happened a moment later
  await lineAfter(slow, 0, (l) => l.startsWith('m v-3 '), SLOW_MS + 10_000)
  const slowEnd = Date.now()
  await waitFor(() => new Set(handled([slow, other]).map((h) => h.value)).size >= TOTAL, {
    timeout: 15_000,
    interval: 100,
    what: `all ${TOTAL} messages handled by the two members`,
  })
  // a sleep on purpose: the test shows that nothing happens next (the slow member's late commit does not land, the
  // offset does not move back); 2 s covers that commit and many of the watcher's 50 ms samples
  await sleep(2000)
  for (const c of [slow, other]) c.proc.kill('SIGTERM')
  await Promise.all([slow.exited, other.exited])
  await watcher.stop()
  const { rows } = await t.db.pool.query<{ offset_value: string }>(
    `SELECT offset_value::text FROM "${t.db.schema}".metadata_queue_consumer_offset WHERE consumer_group = $1`,
    [group],
  )
  return { slow, other, slowEnd, watcher, finalOffset: rows[0]?.offset_value }
}

function counts(children: Child[]) {
  const byValue = new Map<string, number>()
  for (const h of handled(children)) byValue.set(h.value, (byValue.get(h.value) ?? 0) + 1)
  return byValue
}

describe('lease expiry under a slow handler', () => {
  it('the partition moves on, the slow message is redelivered once, and the late commit is refused', async () => {
    const { slow, other, slowEnd, watcher, finalOffset } = await scenario({ AUTO_COMMIT_THRESHOLD: '1' })
    const byValue = counts([slow, other])
    const lateCommits = commits(slow).filter((c) => c.at >= slowEnd - 200)
    console.log(
      `slow handler (${SLOW_MS} ms, session 3000 ms): deliveries ${[...byValue].map(([v, n]) => `${v}x${n}`).join(' ')}; ` +
        `other member handled ${handled([other]).length}; slow member's commits after its handler ended: ${JSON.stringify(lateCommits)}; ` +
        `final offset ${finalOffset}; ${watcher.samples} samples, ${watcher.regressions.length} regressions`,
    )
    expect(byValue.get('v-3')).toBe(2) // the slow member's and one redelivery
    for (let n = 0; n < TOTAL; n++) if (n !== 3) expect(byValue.get(`v-${n}`), `v-${n}`).toBe(1)
    expect(handled([other]).filter((h) => h.value === 'v-3')).toHaveLength(1)
    expect(lateCommits.filter((c) => c.offset < TOTAL)).toEqual([])
    expect(watcher.regressions).toEqual([])
    expect(finalOffset).toBe(String(TOTAL))
  }, 60_000)

  it('with manual commits (consumer.commitOffsets), the late commit of the member that lost the lease does not move the offset back', async () => {
    const { slow, other, watcher, finalOffset } = await scenario({ MANUAL_COMMIT: '1' })
    const late = slow.lines.filter((l) => l.startsWith('mc ') || l.startsWith('mcerr '))
    const byValue = counts([slow, other])
    console.log(
      `manual commits: other member committed ${other.lines.filter((l) => l.startsWith('mc ')).length} times; slow member's commit lines ${JSON.stringify(late)}; ` +
        `final offset ${finalOffset}; regressions ${JSON.stringify(watcher.regressions)}; deliveries ${[...byValue].map(([v, n]) => `${v}x${n}`).join(' ')}`,
    )
    expect(handled([other]).some((h) => h.value === 'v-3')).toBe(true)
    expect(watcher.regressions).toEqual([])
    expect(finalOffset).toBe(String(TOTAL))
    // and so nothing after the slow message is handled twice
    for (let n = 4; n < TOTAL; n++) expect(byValue.get(`v-${n}`), `v-${n}`).toBe(1)
  }, 60_000)
})
