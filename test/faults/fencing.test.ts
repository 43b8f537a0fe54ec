// Fencing by generation (issue #13 items 3, 4, 6): a member stopped (SIGSTOP) past its session timeout while
// another takes its partition over must, once it runs again (SIGCONT), neither handle a message nor commit an
// offset nor commit a transaction until it has rejoined the group; and a step of its wall clock changes nothing.
import { describe, expect, it } from 'vitest'
import { waitFor } from '../helpers/db.js'
import { uniqueName, useTestKafka } from '../helpers/kafka.js'
import { spawnFixture, type Child } from '../helpers/processes.js'
import { commits, handled, watchOffsets } from './support.js'

const t = useTestKafka('fault_fencing')
const TOTAL = 60

const readyTimes = (c: Child) => c.lines.filter((l) => l.startsWith('ready ')).map((l) => Number(l.split(' ')[1]))

async function stallScenario(extra: Record<string, string>) {
  const topic = await t.createTopic(1, 'fence')
  const group = uniqueName('g')
  const producer = await t.producer()
  await producer.send({ topic, messages: Array.from({ length: TOTAL }, (_, n) => ({ value: `v-${n}`, partition: 0 })) })
  const env = {
    PG_URL: t.db.connectionString,
    PG_SCHEMA: t.db.schema,
    TOPIC: topic,
    GROUP: group,
    SESSION_TIMEOUT: '3000',
    HEARTBEAT: '300',
    HANDLER_DELAY_MS: '50',
    ...extra,
  }
  const watcher = watchOffsets(t.db.connectionString, t.db.schema, 'metadata_queue', group, 50)
  const a = spawnFixture('fencedConsumer.ts', env)
  // A is working through the backlog
  await a.waitForLine((l) => l.startsWith('m v-4 '), 30_000)
  a.proc.kill('SIGSTOP')
  const stoppedAt = Date.now()
  const b = spawnFixture('fencedConsumer.ts', { ...env, CLOCK_OFFSET_MS: '0' })
  // B takes the partition over once A's lease lapsed, and makes progress
  await b.waitForLine((l) => l.startsWith('m ') && Number(l.split(' ')[4]) > stoppedAt, 30_000)
  await b.waitForLine((l) => l.startsWith('c ') || l.startsWith('m v-2'), 30_000)
  a.proc.kill('SIGCONT')
  const resumedAt = Date.now()
  // A notices, rejoins (a new GROUP_JOIN), and the group drains the backlog
  await a.waitForLine((l) => l.startsWith('ready ') && Number(l.split(' ')[1]) > resumedAt, 30_000)
  const drained = () => new Set(handled([a, b]).map((h) => h.value)).size >= TOTAL
  await waitFor(drained, { timeout: 30_000, interval: 50, what: `the group to drain all ${TOTAL} messages` })
  for (const c of [a, b]) c.proc.kill('SIGTERM')
  await Promise.all([a.exited, b.exited])
  await watcher.stop()
  const rejoinedAt = readyTimes(a).find((at) => at > resumedAt)!
  return { a, b, resumedAt, rejoinedAt, watcher }
}

describe('a member stalled past its session timeout', () => {
  it('handles and commits nothing after the takeover until it rejoined; nothing is lost', async () => {
    const { a, b, resumedAt, rejoinedAt, watcher } = await stallScenario({})
    const zombieHandled = handled([a]).filter((h) => h.start >= resumedAt && h.start < rejoinedAt)
    const zombieCommits = commits(a).filter((c) => c.at >= resumedAt && c.at < rejoinedAt)
    const values = new Set(handled([a, b]).map((h) => h.value))
    console.log(
      `after SIGCONT, before its rejoin (${rejoinedAt - resumedAt} ms): A handled ${zombieHandled.length}, committed ${zombieCommits.length}; ` +
        `A handled ${handled([a]).length} in all, B ${handled([b]).length}; distinct ${values.size}/${TOTAL}; offset regressions ${watcher.regressions.length}`,
    )
    expect(zombieHandled).toEqual([])
    expect(zombieCommits).toEqual([])
    expect(values.size).toBe(TOTAL)
    expect(watcher.regressions).toEqual([])
  }, 120_000)

  it('consume-transform-produce: the stalled member cannot commit its transaction after the takeover (no duplicate output)', async () => {
    const topic = await t.createTopic(1, 'fence')
    const outTopic = await t.createTopic(1, 'out')
    const group = uniqueName('g')
    const producer = await t.producer()
    await producer.send({ topic, messages: Array.from({ length: TOTAL }, (_, n) => ({ value: `v-${n}`, partition: 0 })) })
    const env = {
      PG_URL: t.db.connectionString,
      PG_SCHEMA: t.db.schema,
      TOPIC: topic,
      GROUP: group,
      SESSION_TIMEOUT: '3000',
      HEARTBEAT: '300',
      TX: '1',
      OUT_TOPIC: outTopic,
    }
    // A stops inside its transaction for v-3, output sent, offsets not yet
    const a = spawnFixture('fencedConsumer.ts', { ...env, PRE_OFFSETS_DELAY_MS: '1000' })
    await a.waitForLine((l) => l.startsWith('begin v-3 '), 30_000)
    a.proc.kill('SIGSTOP')
    const b = spawnFixture('fencedConsumer.ts', { ...env, HANDLER_DELAY_MS: '300' })
    // B took the partition over from the committed offset and is inside its own transaction for v-3
    await b.waitForLine((l) => l.startsWith('sent v-3 '), 30_000)
    a.proc.kill('SIGCONT')
    // A rejoins (its consumer does not crash on the refused transaction, as KafkaJS rejoins on ILLEGAL_GENERATION)
    // and either member may own the partition from then on
    await Promise.any([a, b].map((c) => c.waitForLine((l) => l.startsWith(`m v-${TOTAL - 1} `), 60_000)))
    for (const c of [a, b]) c.proc.kill('SIGTERM')
    await Promise.all([a.exited, b.exited])
    const { rows } = await t.db.pool.query<{ total: string; distinct: string }>(
      `SELECT count(*)::text AS total, count(DISTINCT payload)::text AS distinct
       FROM "${t.db.schema}".metadata_queue_message m JOIN "${t.db.schema}".metadata_queue_topic tp ON tp.id = m.topic_id
       WHERE tp.topic_name = $1`,
      [outTopic],
    )
    const refused = a.lines.filter((l) => l.startsWith('txerr '))
    console.log(
      `output rows ${rows[0].total} (distinct ${rows[0].distinct}) for ${TOTAL} inputs; A committed ${handled([a])
        .map((h) => h.value)
        .join(',')}; A refused: ${refused.join(' | ')}; B committed ${handled([b]).length}`,
    )
    expect(handled([a]).map((h) => h.value)).not.toContain('v-3')
    expect(rows[0].distinct).toBe(String(TOTAL))
    expect(rows[0].total).toBe(String(TOTAL))
  }, 120_000)

  it('a wall-clock step backwards in a member changes nothing: it keeps its partition and the group drains', async () => {
    const topic = await t.createTopic(1, 'clock')
    const group = uniqueName('g')
    const producer = await t.producer()
    await producer.send({ topic, messages: Array.from({ length: TOTAL }, (_, n) => ({ value: `v-${n}`, partition: 0 })) })
    const env = {
      PG_URL: t.db.connectionString,
      PG_SCHEMA: t.db.schema,
      TOPIC: topic,
      GROUP: group,
      SESSION_TIMEOUT: '3000',
      HEARTBEAT: '300',
      HANDLER_DELAY_MS: '50',
    }
    const a = spawnFixture('fencedConsumer.ts', { ...env, CLOCK_OFFSET_MS: String(-3_600_000) })
    await a.waitForLine((l) => l.startsWith('ready '), 30_000)
    const b = spawnFixture('fencedConsumer.ts', env)
    await b.waitForLine((l) => l.startsWith('ready '), 30_000)
    await a.waitForLine((l) => l.startsWith(`m v-${TOTAL - 1} `), 60_000).catch(() => b.waitForLine((l) => l.startsWith(`m v-${TOTAL - 1} `), 30_000))
    for (const c of [a, b]) c.proc.kill('SIGTERM')
    await Promise.all([a.exited, b.exited])
    const all = handled([a, b])
    const byValue = new Map<string, number>()
    for (const h of all) byValue.set(h.value, (byValue.get(h.value) ?? 0) + 1)
    console.log(`clock stepped back 1 h in A: A handled ${handled([a]).length}, B ${handled([b]).length}, duplicates ${all.length - byValue.size}`)
    expect(byValue.size).toBe(TOTAL)
    expect(all.length - byValue.size).toBeLessThanOrEqual(1)
  }, 120_000)
})
