// Exactly-once consume-transform-produce while the worker is SIGKILLed again and again.
import { describe, expect, it } from 'vitest'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'
import { spawnFixture } from '../../helpers/processes.js'

const t = useTestKafka('exactly_once')

describe('exactly-once copy with sendOffsets', () => {
  it('copies 10,000 messages from A to B exactly once although the worker is killed repeatedly', async () => {
    const source = uniqueName('a')
    const sink = uniqueName('b')
    const producer = await t.producer()
    for (let i = 0; i < 10_000; i += 1000) {
      await producer.send({ topic: source, messages: Array.from({ length: 1000 }, (_, j) => ({ key: `k${(i + j) % 50}`, value: String(i + j) })) })
    }
    const env = { PG_URL: t.db.connectionString, PG_SCHEMA: t.db.schema, SOURCE: source, SINK: sink, GROUP: uniqueName('copier') }
    const copied = async () =>
      Number(
        (
          await t.db.pool.query(
            `SELECT count(*) AS n FROM ${t.db.schema}.metadata_queue_message m JOIN ${t.db.schema}.metadata_queue_topic tp ON tp.id = m.topic_id WHERE tp.topic_name = $1`,
            [sink],
          )
        ).rows[0].n,
      )
    let kills = 0
    const deadline = Date.now() + 150_000
    while ((await copied()) < 10_000 && Date.now() < deadline) {
      const before = await copied()
      const worker = spawnFixture('copyWorker.ts', env)
      await worker.waitForLine((l) => l === 'ready', 30_000)
      // kill it mid-stream: once it has committed something (a fixed delay let a fast machine copy everything in the
      // first round, so nothing was ever killed), a little later at random (until the last rounds, which may finish)
      const progressBy = Date.now() + 10_000
      while ((await copied()) === before && Date.now() < progressBy) await new Promise((r) => setTimeout(r, 5))
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 150)))
      if ((await copied()) < 10_000) {
        worker.proc.kill('SIGKILL')
        kills++
        await worker.exited
      } else {
        worker.proc.kill('SIGTERM')
        await worker.exited
      }
      if (kills >= 8) {
        // enough chaos: let one worker finish the job
        const last = spawnFixture('copyWorker.ts', env)
        while ((await copied()) < 10_000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
        last.proc.kill('SIGTERM')
        await last.exited
      }
    }
    const rows = await t.db.pool.query<{ value: string; n: string }>(
      `SELECT convert_from(m.payload, 'UTF8') AS value, count(*) AS n
       FROM ${t.db.schema}.metadata_queue_message m JOIN ${t.db.schema}.metadata_queue_topic tp ON tp.id = m.topic_id
       WHERE tp.topic_name = $1 GROUP BY 1`,
      [sink],
    )
    console.log(`exactly-once copy: ${kills} SIGKILLs, ${rows.rows.length} distinct messages in B`)
    expect(kills).toBeGreaterThan(0)
    expect(rows.rows.filter((r) => Number(r.n) > 1)).toEqual([])
    expect(rows.rows.length).toBe(10_000)
    expect(new Set(rows.rows.map((r) => r.value))).toEqual(new Set(Array.from({ length: 10_000 }, (_, i) => `copy:${i}`)))
  }, 200_000)
})
