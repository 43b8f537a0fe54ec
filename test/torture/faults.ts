// Fault injection at seeded random times: SIGKILL (respawned), SIGSTOP past the session timeout then SIGCONT,
// pg_terminate_backend of one client connection, a restart of the private server, a connection cut right after a
// request (lost answer), a slow network, a step of a worker's wall clock, a long transaction holding a partition's
// write lock while the waiting clients' connections time out, every free connection slot of the server taken by
// another role for a few seconds, a failover to the synchronous standby. Each fault is recorded before it happens.
import { writeFileSync } from 'node:fs'
import pg from 'pg'
import { quoteIdent } from '../../src/db/identifiers.js'
import type { Fleet } from './fleet.js'
import type { FaultKind, Recorder } from './history.js'
import type { FaultProxy } from './proxy.js'
import type { Rng } from './rng.js'
import type { PrivateServer } from './server.js'
import { clockFile } from './workers/clock.js'

export interface FaultTargets {
  fleet: Fleet
  rec: Recorder
  rng: Rng
  sessionTimeoutMs: number
  /** the run's folder: where a worker's clock step is written */
  dir: string
  /** application_name prefix of the run's client connections */
  appPrefix: string
  /** direct (not proxied) connection for pg_terminate_backend and the lock holder */
  adminUrl?: string
  /** the run's schema (pgQueue) */
  schema?: string
  server?: PrivateServer
  proxy?: FaultProxy
  /** every proxy in front of the server (the workers', the direct one): a failover points them at the new primary */
  proxies?: FaultProxy[]
}

export async function injectFault(kind: FaultKind, t: FaultTargets): Promise<void> {
  const { fleet, rec, rng } = t
  switch (kind) {
    case 'kill': {
      const victims = fleet.live()
      if (victims.length === 0) return
      const slot = rng.pick(victims)
      rec.record({ k: 'fault', f: 'kill', target: slot.writer })
      fleet.signal(slot, 'SIGKILL') // the fleet respawns it
      return
    }
    case 'stop': {
      const victims = fleet.live((s) => !s.stopped && s.spec.role !== 'maintenance')
      if (victims.length === 0) return
      const slot = rng.pick(victims)
      const ms = Math.round(t.sessionTimeoutMs * (1.5 + rng.next()))
      rec.record({ k: 'fault', f: 'stop', target: slot.writer, detail: `${ms} ms` })
      slot.stopped = true
      fleet.signal(slot, 'SIGSTOP')
      setTimeout(() => fleet.cont(slot), ms)
      return
    }
    case 'terminate': {
      const client = new pg.Client({ connectionString: t.adminUrl, connectionTimeoutMillis: 2000 })
      client.on('error', () => undefined)
      try {
        await client.connect()
        const { rows } = await client.query<{ pid: number; application_name: string }>(
          `SELECT pid, application_name FROM pg_stat_activity WHERE application_name LIKE $1 || '%' AND pid <> pg_backend_pid()`,
          [t.appPrefix],
        )
        if (rows.length === 0) return
        const victim = rng.pick(rows)
        rec.record({ k: 'fault', f: 'terminate', target: victim.application_name, detail: `pid ${victim.pid}` })
        await client.query('SELECT pg_terminate_backend($1)', [victim.pid])
      } catch {
        // the server may be restarting: no fault this time
      } finally {
        await client.end().catch(() => undefined)
      }
      return
    }
    case 'restart': {
      const downMs = rng.int(300, 2500)
      rec.record({ k: 'fault', f: 'restart', target: 'postgres', detail: `${downMs} ms down` })
      await t.server!.restart(downMs)
      return
    }
    case 'drop': {
      // mostly producers: a lost answer to a send or COMMIT is what retries and idempotence must survive
      const victims = fleet.live((s) => rng.chance(0.3) || s.spec.role === 'producer')
      if (victims.length === 0) return
      const slot = rng.pick(victims)
      rec.record({ k: 'fault', f: 'drop', target: slot.writer, detail: 'its next request is answered into the void' })
      const suffix = `_${slot.writer}`
      t.proxy!.dropNext((name) => name.endsWith(suffix))
      return
    }
    case 'delay': {
      const ms = rng.int(100, 800)
      const forMs = rng.int(1000, 4000)
      rec.record({ k: 'fault', f: 'delay', target: 'proxy', detail: `${ms} ms for ${forMs} ms` })
      t.proxy!.delay(ms, Date.now() + forMs)
      return
    }
    case 'lock':
      return holdPartitionLock(t)
    case 'connections':
      return exhaustConnections(t)
    case 'promote': {
      // a standby is rebuilt after each failover: until it streams, no other failover
      if (!t.server?.canFailOver) return
      rec.record({ k: 'fault', f: 'promote', target: 'postgres', detail: 'primary killed (immediate shutdown), synchronous standby promoted' })
      await t.server.failover((port) => {
        for (const p of t.proxies ?? []) p.retarget(port)
      })
      return
    }
    case 'clock': {
      // mostly group members (their liveness and commits must not follow the wall clock), now and then another
      const victims = fleet.live((s) => rng.chance(0.2) || s.spec.role === 'consumer' || s.spec.role === 'transform')
      if (victims.length === 0) return
      const slot = rng.pick(victims)
      const before = clockSteps.get(slot.writer) ?? 0
      // minutes either way, now and then back to the true time
      const after = rng.chance(0.2) ? 0 : before + (rng.chance(0.5) ? -1 : 1) * rng.int(1, 30) * 60_000
      clockSteps.set(slot.writer, after)
      rec.record({
        k: 'fault',
        f: 'clock',
        target: slot.writer,
        detail: `wall clock ${after - before >= 0 ? '+' : ''}${(after - before) / 60_000} min (now ${after / 60_000} min off)`,
      })
      writeFileSync(clockFile(t.dir, slot.writer), String(after))
      fleet.signal(slot, 'SIGUSR2')
      return
    }
  }
}

/** the current step of each worker's wall clock (a respawned worker is a new writer and starts on the true time) */
const clockSteps = new Map<string, number>()

/**
 * A transaction beside the clients (DataHub's producer, an operator's session) holds one partition's write lock —
 * DataHub's advisory lock, which every writer of ours takes — for a while; meanwhile the proxy cuts every client
 * connection whose request has waited some hundred ms. A cut send is retried on a new connection while its first
 * attempt still waits on the server: both must not be stored (the idempotent dedup must look after the lock).
 */
async function holdPartitionLock(t: FaultTargets): Promise<void> {
  const { rng, rec } = t
  const client = new pg.Client({ connectionString: t.adminUrl, connectionTimeoutMillis: 2000 })
  client.on('error', () => undefined)
  const fn = (name: string) => `${quoteIdent(t.schema!)}.${quoteIdent(`metadata_queue_${name}`)}`
  try {
    await client.connect()
    const { rows } = await client.query<{ id: string; topic_name: string; partition_count: number }>(
      `SELECT id, topic_name, partition_count FROM ${fn('topic')}`,
    )
    if (rows.length === 0) return
    const topic = rng.pick(rows)
    const partition = rng.int(0, topic.partition_count - 1)
    const holdMs = rng.int(500, 3000)
    const cutAfterMs = rng.int(150, 600)
    await client.query('BEGIN')
    await client.query(`SELECT pg_advisory_xact_lock(${fn('lock_key')}($1, $2))`, [topic.id, partition])
    rec.record({
      k: 'fault',
      f: 'lock',
      target: `${topic.topic_name}/${partition}`,
      detail: `write lock held ${holdMs} ms; requests unanswered for ${cutAfterMs} ms are cut`,
    })
    t.proxy!.cutSlow(cutAfterMs, Date.now() + holdMs)
    await new Promise((resolve) => setTimeout(resolve, holdMs))
    await client.query('COMMIT')
  } catch {
    // the server may be restarting: the lock went with it
  } finally {
    await client.end().catch(() => undefined)
  }
}

const HOG_ROLE = 'torture_hog'
const TOO_MANY = '53300'

/**
 * Another role (an application sharing the server, a connection leak) takes every free connection slot of the
 * private server for 1-4 s: the clients' new connections are refused with "too many clients" (53300, retriable)
 * and must recover by themselves once the slots are free again; their open connections go on.
 */
async function exhaustConnections(t: FaultTargets): Promise<void> {
  const { rng, rec } = t
  const admin = new pg.Client({ connectionString: t.adminUrl, connectionTimeoutMillis: 2000 })
  admin.on('error', () => undefined)
  const hogs: pg.Client[] = []
  try {
    await admin.connect()
    await admin.query(`DO $$ BEGIN CREATE ROLE ${HOG_ROLE} LOGIN SUPERUSER; EXCEPTION WHEN duplicate_object THEN NULL; END $$`)
    await admin.end()
    const url = new URL(t.adminUrl!)
    url.username = HOG_ROLE
    const holdMs = rng.int(1000, 4000)
    // in waves, until the server refuses: a superuser role, so the reserved slots go too
    for (let full = false; !full && hogs.length < 400;) {
      const wave = Array.from({ length: 20 }, () => new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 2000 }))
      const outcomes = await Promise.allSettled(wave.map((c) => (c.on('error', () => undefined), c.connect().then(() => c))))
      for (const o of outcomes) {
        if (o.status === 'fulfilled') hogs.push(o.value)
        else full ||= (o.reason as { code?: string }).code === TOO_MANY || /too many clients/.test(String(o.reason))
      }
      if (outcomes.every((o) => o.status === 'rejected')) full = true
    }
    rec.record({ k: 'fault', f: 'connections', target: 'postgres', detail: `${hogs.length} connections of ${HOG_ROLE} held ${holdMs} ms` })
    await new Promise((resolve) => setTimeout(resolve, holdMs))
  } catch {
    // the server may be restarting: no fault this time
  } finally {
    await admin.end().catch(() => undefined)
    await Promise.all(hogs.map((c) => c.end().catch(() => undefined)))
  }
}
