// PostgreSQL restarted mid-stream (a fast shutdown of the test's OWN embedded server, then a start on the same port):
// producers in child processes see retriable KafkaJS errors and then succeed, consumers reconnect on their own,
// every acknowledged send is delivered, and no committed offset ever moves backwards.
import { beforeAll, describe, expect, it } from 'vitest'
import { Kafka } from '../../src/kafka.js'
import { KafkaJSError } from '../../src/kafkajs/errors.js'
import { logLevel } from '../../src/kafkajs/exports.js'
import { uniqueName } from '../helpers/kafka.js'
import { spawnFixture, type Child } from '../helpers/processes.js'
import {
  ackTimes,
  acked,
  handled,
  producerErrors,
  sleep,
  startOwnServer,
  tally,
  uniqueAppName,
  watchOffsets,
  withAppName,
  type OwnServer,
} from './support.js'

const SCHEMA = 'fault_restart'
const DOWN_MS = 3000
let server: OwnServer
let url: string

beforeAll(async () => {
  server = await startOwnServer('restart')
  url = withAppName(server.url, uniqueAppName('restart'))
})

function newKafka(): Kafka {
  return new Kafka({
    clientId: 'restart-test',
    logLevel: logLevel.NOTHING,
    pgqueue: { connectionString: url, schema: SCHEMA, enabled: true, pool: { connectionTimeoutMillis: 1000 } },
  })
}

async function waitUntil(what: string, predicate: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now()
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(50)
  }
  return Date.now()
}

describe('PostgreSQL restarted mid-stream', () => {
  it('producers get retriable KafkaJS errors then succeed; consumers reconnect; nothing acknowledged is lost; offsets never move back', async () => {
    const topic = uniqueName('restart')
    const group = uniqueName('g')
    const admin = newKafka().admin()
    await admin.connect()
    await admin.createTopics({ topics: [{ topic, numPartitions: 4 }] })
    await admin.disconnect()

    const base = { PG_URL: url, PG_SCHEMA: SCHEMA, TOPIC: topic }
    const producers: Array<{ tag: string; child: Child }> = ['pa', 'pb'].map((tag) => ({
      tag,
      child: spawnFixture('faultProducer.ts', {
        ...base,
        TAG: tag,
        MODE: 'stream',
        COUNT: '1000000',
        BATCH: '5',
        KEYS: '16',
        PACE_MS: '15',
        RETRIES: '2',
      }),
    }))
    const consumers = [0, 1].map(() => spawnFixture('faultConsumer.ts', { ...base, GROUP: group, MAX_WAIT: '500' }))
    await Promise.all([
      ...producers.map((p) => p.child.waitForLine((l) => l === 'ready')),
      ...consumers.map((c) => c.waitForLine((l) => l === 'ready')),
    ])
    const watcher = watchOffsets(server.url, SCHEMA, 'metadata_queue', group)

    // mid-stream: both producers acknowledged and both consumers handled something
    await waitUntil(
      'traffic before the restart',
      () => producers.every((p) => ackTimes(p.child).length >= 10) && handled(consumers).length >= 50,
      30_000,
    )
    const downAt = Date.now()
    await server.stop()
    await sleep(DOWN_MS)
    await server.start()
    const upAt = Date.now()

    const producerRecovery = await Promise.all(
      producers.map(
        async (p) => (await waitUntil(`${p.tag} acknowledged after the restart`, () => ackTimes(p.child).some((t) => t > upAt), 30_000)) - upAt,
      ),
    )
    const consumerRecovery = (await waitUntil('a delivery after the restart', () => handled(consumers).some((h) => h.start > upAt), 30_000)) - upAt
    await sleep(1500)
    for (const p of producers) p.child.proc.kill('SIGTERM')
    expect(await Promise.all(producers.map((p) => p.child.exited))).toEqual([0, 0])

    const sent = producers.flatMap((p) => acked(p.child, p.tag))
    await waitUntil('every acknowledged message delivered', () => tally(sent, handled(consumers)).lost.length === 0, 45_000).catch(() => undefined)
    // the consumers never exited on their own: they reconnected
    expect(consumers.map((c) => c.proc.exitCode)).toEqual([null, null])
    for (const c of consumers) c.proc.kill('SIGTERM')
    await Promise.all(consumers.map((c) => c.exited))
    await sleep(300)
    await watcher.stop()

    const errors = producers.flatMap((p) => producerErrors(p.child))
    const t = tally(sent, handled(consumers))
    console.log(
      `restart: down ${DOWN_MS} ms (stop + start took ${upAt - downAt - DOWN_MS} ms more); producers recovered after ${producerRecovery.join(' / ')} ms, ` +
        `consumers after ${consumerRecovery} ms; sent ${t.sent}, delivered ${t.delivered}, duplicates ${t.duplicates}, lost ${t.lost.length}; ` +
        `${errors.length} producer errors (${[...new Set(errors.map((e) => `${e.name}<${e.causeName}>`))].join(', ')}); ` +
        `${watcher.samples} offset samples, ${watcher.regressions.length} regressions; crashes ${consumers.flatMap((c) => c.lines.filter((l) => l.startsWith('crash'))).length}`,
    )
    // every producer saw the outage, as retriable KafkaJS errors (directly, or as the cause of the spent retries)
    for (const p of producers) expect(producerErrors(p.child).length).toBeGreaterThan(0)
    for (const e of errors) {
      expect(e.name).toMatch(/^KafkaJS/)
      expect(e.retriable || e.causeRetriable, `${e.name} ${e.causeName}: ${e.message}`).toBe(true)
    }
    expect(t.lost).toEqual([])
    expect(watcher.regressions).toEqual([])
    expect(watcher.samples).toBeGreaterThan(10)
  }, 120_000)

  it('a send to a topic not in the metadata cache while the server is down fails with a KafkaJS error, not a raw pg error', async () => {
    const producer = newKafka().producer({ retry: { retries: 1, initialRetryTime: 50 } })
    await producer.connect()
    try {
      await producer.send({ topic: uniqueName('warm'), messages: [{ value: 'x' }] })
      await server.stop()
      let error: unknown
      try {
        await producer.send({ topic: uniqueName('cold'), messages: [{ value: 'while down' }] })
      } catch (e) {
        error = e
      } finally {
        await server.start()
      }
      // and once the server is back the same producer works again
      await producer.send({ topic: uniqueName('cold'), messages: [{ value: 'after' }] })
      expect(error).toBeDefined()
      // KafkaJS apps decide on retrying with `instanceof KafkaJSError` and `retriable` (the raw error here comes
      // from the topic lookup in producer.send's plan(), which runs outside the retrier and is never wrapped)
      expect(error, `got ${(error as Error).name}: ${(error as Error).message}`).toBeInstanceOf(KafkaJSError)
      const err = error as { retriable?: boolean; cause?: { retriable?: boolean } }
      expect(err.retriable || err.cause?.retriable).toBe(true)
    } finally {
      await producer.disconnect()
    }
  }, 60_000)
})
