// A PostgreSQL failover with traffic running: producers and consumers in child processes connect through a host
// list (primary, standby; target_session_attrs=read-write), the primary is SIGKILLed the way a machine dies and the
// standby promoted. With a synchronous standby nothing acknowledged may be lost; with an asynchronous one the test
// measures what is lost (docs/guarantees.md, "Failover"). Both print their figures: lost, duplicates, recovery times.
import { describe, expect, it } from 'vitest'
import { Kafka } from '../../src/kafka.js'
import { logLevel } from '../../src/kafkajs/exports.js'
import { uniqueName } from '../helpers/kafka.js'
import { spawnFixture, type Child } from '../helpers/processes.js'
import { query, startFailoverCluster } from './failoverCluster.js'
import { ackTimes, acked, handled, orderViolations, producerErrors, sleep, tally } from './support.js'

const SCHEMA = 'fault_failover'
const KEYS = 8
/** every client must be working again this long after the standby was promoted (a hang bound, not a timing claim) */
const RECOVERY_BOUND_MS = 20_000

async function waitUntil(what: string, predicate: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now()
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(25)
  }
  return Date.now()
}

describe.each(['sync', 'async'] as const)('failover to a promoted %s standby', (mode) => {
  it('clients find the new primary by themselves; acknowledged messages are delivered in per-key order', async () => {
    const cluster = await startFailoverCluster(mode, mode)
    const topic = uniqueName('failover')
    const group = uniqueName('g')
    const admin = new Kafka({
      clientId: 'failover-test',
      logLevel: logLevel.NOTHING,
      pgqueue: { connectionString: cluster.url, schema: SCHEMA, enabled: true },
    }).admin()
    await admin.connect()
    await admin.createTopics({ topics: [{ topic, numPartitions: 4 }] })
    await admin.disconnect()

    const base = { PG_URL: cluster.url, PG_SCHEMA: SCHEMA, TOPIC: topic }
    // an idempotent producer (its retry after an unanswered COMMIT is deduplicated) that rides the failover out, and a
    // plain one with a single retry: its sends in flight fail, with retriable errors, and the application resends them
    const kinds: Array<{ tag: string; env: Record<string, string> }> = [
      { tag: 'pi', env: { IDEMPOTENT: '1', RETRIES: '1000' } },
      { tag: 'pp', env: { RETRIES: '1' } },
    ]
    const producers: Array<{ tag: string; child: Child }> = kinds.map(({ tag, env }) => ({
      tag,
      child: spawnFixture('faultProducer.ts', {
        ...base,
        ...env,
        TAG: tag,
        MODE: 'stream',
        COUNT: '1000000',
        BATCH: '4',
        KEYS: String(KEYS),
        PACE_MS: '5',
      }),
    }))
    const consumers = [0, 1].map(() =>
      spawnFixture('faultConsumer.ts', { ...base, GROUP: group, MAX_WAIT: '500', SESSION_TIMEOUT: '10000', HEARTBEAT: '500' }),
    )
    await Promise.all([
      ...producers.map((p) => p.child.waitForLine((l) => l === 'ready')),
      ...consumers.map((c) => c.waitForLine((l) => l === 'ready')),
    ])

    await waitUntil(
      'traffic before the failover',
      () => producers.every((p) => ackTimes(p.child).length >= 30) && handled(consumers).length >= 100,
      30_000,
    )
    const killedAt = Date.now()
    cluster.killPrimary()
    await cluster.promote()
    const promotedAt = Date.now()

    const producerBack = await Promise.all(
      producers.map(
        async (p) =>
          (await waitUntil(`${p.tag} acknowledged after the promotion`, () => ackTimes(p.child).some((t) => t > promotedAt), RECOVERY_BOUND_MS)) -
          killedAt,
      ),
    )
    const consumerBack = await Promise.all(
      consumers.map(
        async (c, i) =>
          (await waitUntil(
            `consumer ${i} handled a message after the promotion`,
            () => handled([c]).some((h) => h.start > promotedAt),
            RECOVERY_BOUND_MS,
          )) - killedAt,
      ),
    )
    // more traffic on the new primary, then the producers stop
    const after = producers.map((p) => ackTimes(p.child).length)
    await waitUntil('traffic after the failover', () => producers.every((p, i) => ackTimes(p.child).length >= after[i]! + 30), 30_000)
    for (const p of producers) p.child.proc.kill('SIGTERM')
    expect(await Promise.all(producers.map((p) => p.child.exited))).toEqual([0, 0])

    // what the new primary holds: an acknowledged message missing there was lost by the failover itself
    const rows = (
      await query<{ v: string }>(cluster.standby.url, `SELECT convert_from(payload, 'UTF8') AS v FROM "${SCHEMA}".metadata_queue_message`)
    ).map((r) => r.v)
    const stored = new Set(rows)
    const sent = producers.flatMap((p) => acked(p.child, p.tag))
    const lostInFailover = sent.filter((v) => !stored.has(v))
    const survivors = sent.filter((v) => stored.has(v))
    await waitUntil('every stored acknowledged message delivered', () => tally(survivors, handled(consumers)).lost.length === 0, 45_000).catch(
      () => undefined,
    )
    expect(consumers.map((c) => c.proc.exitCode)).toEqual([null, null])
    for (const c of consumers) c.proc.kill('SIGTERM')
    await Promise.all(consumers.map((c) => c.exited))

    const deliveries = handled(consumers)
    const t = tally(survivors, deliveries)
    const order = orderViolations(
      deliveries.filter((h) => stored.has(h.value)),
      (v) => `${v.split('-')[0]}:${Number(v.split('-')[1]) % KEYS}`,
      (v) => Number(v.split('-')[1]),
    )
    const errors = producers.flatMap((p) => producerErrors(p.child))
    // stored twice: a plain producer's retry after an unanswered COMMIT that had in fact committed
    const producerDuplicates = rows.length - stored.size
    // handled before the kill, gone from the new primary: what a consumer may have acted on that no longer exists
    const phantom = new Set(deliveries.filter((h) => !stored.has(h.value)).map((h) => h.value)).size
    console.log(
      `failover (${mode} standby): promoted ${promotedAt - killedAt} ms after the kill; producers back after ${producerBack.join(' / ')} ms, ` +
        `consumers after ${consumerBack.join(' / ')} ms (from the kill); acknowledged ${new Set(sent).size}, lost in the failover ${lostInFailover.length}` +
        `${lostInFailover.length ? ` (${lostInFailover.slice(0, 6).join(', ')}${lostInFailover.length > 6 ? ', ...' : ''})` : ''}, ` +
        `delivered ${t.delivered}, not delivered ${t.lost.length}, duplicate deliveries ${t.duplicates}, stored twice ${producerDuplicates}, handled but gone ${phantom}, ` +
        `per-key order violations ${order}; ${errors.length} producer errors (${[...new Set(errors.map((e) => `${e.name}<${e.causeName}>`))].join(', ')})`,
    )
    for (const e of errors) expect(e.retriable || e.causeRetriable, `${e.name} ${e.causeName}: ${e.message}`).toBe(true)
    expect(t.lost).toEqual([])
    expect(order).toBe(0)
    if (mode === 'sync') expect(lostInFailover).toEqual([])
  }, 180_000)
})
