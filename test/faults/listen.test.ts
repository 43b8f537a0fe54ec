// The LISTEN connection is killed (pg_terminate_backend of the consumer's wake-up connection, found by its LISTEN
// query on this schema's channel and this test's application_name): the consumer keeps receiving (polling, and
// the wake-up after re-listening) and a LISTEN backend comes back.
import { describe, expect, it } from 'vitest'
import { quoteIdent } from '../../src/db/identifiers.js'
import { tablesFor } from '../../src/db/tables.js'
import { waitFor } from '../helpers/db.js'
import { uniqueName, useTestKafka } from '../helpers/kafka.js'
import { spawnFixture, type Child } from '../helpers/processes.js'
import { handled, sleep, uniqueAppName, withAppName } from './support.js'

const t = useTestKafka('fault_listen')

async function arrival(child: Child, value: string, timeoutMs: number): Promise<number> {
  const line = await child.waitForLine((l) => l.startsWith(`m ${value} `), timeoutMs)
  return Number(line.split(' ')[4])
}

describe('LISTEN connection killed', () => {
  it('the consumer falls back to polling, still receives, and LISTENs again', async () => {
    const app = uniqueAppName('listen')
    const topic = uniqueName('listen')
    const group = uniqueName('g')
    const producer = await t.producer()
    await producer.send({ topic, messages: [{ value: 'm-0', partition: 0 }] })
    // heartbeats every 5 s and a 10 s poll timer: without wake-ups a message could wait seconds
    const consumer = spawnFixture('faultConsumer.ts', {
      PG_URL: withAppName(t.db.connectionString, app),
      PG_SCHEMA: t.db.schema,
      TOPIC: topic,
      GROUP: group,
      MAX_WAIT: '10000',
      HEARTBEAT: '5000',
      SESSION_TIMEOUT: '30000',
    })
    await consumer.waitForLine((l) => l.startsWith('m m-0 '), 30_000)
    const listenQuery = `LISTEN ${quoteIdent(tablesFor(t.db.schema, 'metadata_queue').notifyChannel)}`
    // only backends of this test: its application_name AND its schema's channel; `listening` ones have finished LISTEN
    const listeners = async (state = '%') =>
      (
        await t.db.pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query = $2 AND state LIKE $3', [
          app,
          listenQuery,
          state,
        ])
      ).rows.map((r) => r.pid)
    const listening = async () => ((await listeners('idle')).length === 1 ? listeners('idle') : undefined)
    const terminated: number[] = []
    const kill = async (pids: number[]) => {
      for (const pid of pids) {
        const { rows } = await t.db.pool.query<{ ok: boolean }>(
          'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE pid = $1 AND application_name = $2',
          [pid, app],
        )
        if (rows[0]?.ok) terminated.push(pid)
      }
    }

    // 1. with LISTEN up, an idle consumer is woken at once
    await waitFor(listening, { timeout: 10_000, what: 'the LISTEN connection' })
    let sentAt = Date.now()
    await producer.send({ topic, messages: [{ value: 'm-1', partition: 0 }] })
    const notifiedLatency = (await arrival(consumer, 'm-1', 8_000)) - sentAt
    const first = await listeners()
    expect(first).toHaveLength(1)

    // 2. kill the LISTEN backend, then send while nobody listens: the message still arrives
    await kill(first)
    sentAt = Date.now()
    await producer.send({ topic, messages: [{ value: 'm-2', partition: 0 }] })
    const lostLatency = (await arrival(consumer, 'm-2', 12_000)) - sentAt

    // 3. a new LISTEN backend appears on its own
    const relistenStarted = Date.now()
    const again = await waitFor(
      async () => {
        const fresh = (await listeners()).filter((pid) => !first.includes(pid))
        return fresh.length > 0 ? fresh : undefined
      },
      { timeout: 10_000, interval: 50, what: 'a new LISTEN backend after the kill' },
    )
    const relistenMs = Date.now() - relistenStarted
    expect(again).toHaveLength(1)

    // 4. flapping: every LISTEN backend is killed as soon as it shows up, for 4 s; messages keep arriving
    const flapUntil = Date.now() + 4000
    const killedBefore = terminated.length
    const flapping = (async () => {
      while (Date.now() < flapUntil) {
        await kill(await listeners())
        await sleep(30) // the fault's own pace (a pg_stat_activity scan every 30 ms), not synchronisation
      }
    })()
    // send once the flapping killed the backend that was up and then one that came back (re-LISTEN after 1 s)
    await waitFor(() => terminated.length > killedBefore + 1, { timeout: 4000, what: 'the flapping to kill a re-LISTENed backend' })
    sentAt = Date.now()
    await producer.send({ topic, messages: [{ value: 'm-3', partition: 0 }] })
    const flappingLatency = (await arrival(consumer, 'm-3', 12_000)) - sentAt
    await flapping

    // 5. after the flapping LISTEN is back and wake-ups are prompt again
    await waitFor(listening, { timeout: 10_000, interval: 50, what: 'the LISTEN connection back after the flapping' })
    expect(await listeners()).toHaveLength(1)
    sentAt = Date.now()
    await producer.send({ topic, messages: [{ value: 'm-4', partition: 0 }] })
    const restoredLatency = (await arrival(consumer, 'm-4', 8_000)) - sentAt

    consumer.proc.kill('SIGTERM')
    await consumer.exited
    console.log(
      `LISTEN killed: latency notified ${notifiedLatency} ms, right after the kill ${lostLatency} ms, re-LISTEN after ${relistenMs} ms, ` +
        `while flapping ${flappingLatency} ms, restored ${restoredLatency} ms; ${terminated.length} LISTEN backends terminated`,
    )
    expect(notifiedLatency).toBeLessThan(2_000)
    // the 5 s heartbeat / 10 s poll timer did not have to run out
    expect(lostLatency).toBeLessThan(5_000)
    expect(flappingLatency).toBeLessThan(5_000)
    expect(restoredLatency).toBeLessThan(2_000)
    expect(terminated.length).toBeGreaterThan(1)
    expect(new Set(handled([consumer]).map((h) => h.value))).toEqual(new Set(['m-0', 'm-1', 'm-2', 'm-3', 'm-4']))
  }, 60_000)
})
