// What every worker process shares: its spec, its recorder, a client for the run's transport, a watchdog that
// reports operations pending beyond the bound, and what the orchestrator asks: SIGTERM to finish and exit, and the
// drain (a file `DRAIN` in the run's folder, seen even by a process that was still starting): stop the random
// operations, consume plainly.
import { existsSync } from 'node:fs'
import path from 'node:path'
import type { Consumer, Kafka } from 'kafkajs'
import { createKafka } from '../../../src/transport.js'
import { logLevel } from '../../../src/kafkajs/exports.js'
import { createRecorder, type Recorder } from '../history.js'
import { createRng, type Rng } from '../rng.js'
import { heartbeatIntervalFor, type ConsumerSpec, type Connection, type TransformSpec, type WorkerSpec } from '../spec.js'

export const DRAIN_FILE = 'DRAIN'

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export interface Worker<S extends WorkerSpec> {
  spec: S
  rng: Rng
  rec: Recorder
  kafka: Kafka
  /** runs `fn` as operation `op`: reported as stuck when pending beyond the bound, its error recorded and rethrown */
  track<T>(op: string, fn: () => Promise<T>): Promise<T>
  recordError(op: string, e: unknown): void
  readonly stopping: boolean
  readonly draining: boolean
  onDrain(fn: () => void): void
  onStop(fn: () => void | Promise<void>): void
  /** tells the orchestrator this worker is connected and working */
  ready(): void
}

export function kafkaFor(conn: Connection, clientId: string): Kafka {
  return createKafka(
    {
      clientId,
      brokers: conn.brokers,
      logLevel: process.env.TORTURE_LOG ? logLevel.DEBUG : logLevel.NOTHING,
      // stdout carries only the 'ready' handshake (fleet.ts); the log goes to the worker's .stderr file
      logCreator: () => (entry) => process.stderr.write(`${JSON.stringify({ ...entry.log, level: entry.label, ns: entry.namespace })}\n`),
      pgqueue: {
        connectionString: conn.pgUrl,
        schema: conn.schema,
        enabled: false, // the orchestrator migrated the schema
        pool: { max: 4, connectionTimeoutMillis: 3000 },
      },
    },
    { DATAHUB_MESSAGING_TRANSPORT: conn.transport },
  )
}

export function describe(e: unknown): { name: string; message: string } {
  const err = e as { name?: string; message?: string; cause?: unknown }
  let message = String(err?.message ?? e)
  for (let c = err?.cause as { message?: string; cause?: unknown } | undefined, depth = 0; c && depth < 3; c = c.cause as typeof c, depth++) {
    message += ` <- ${c.message}`
  }
  return { name: err?.name ?? 'Error', message: message.replace(/\s+/g, ' ').slice(0, 400) }
}

export function startWorker<S extends WorkerSpec>(): Worker<S> {
  const spec = JSON.parse(process.env.TORTURE_SPEC!) as S
  const rec = createRecorder(spec.dir, spec.writer)
  const pending = new Map<number, { op: string; since: number; told: boolean }>()
  let nextOp = 0
  let stopping = false
  let draining = false
  const drainHooks: Array<() => void> = []
  const stopHooks: Array<() => void | Promise<void>> = []
  // monotonic, as the stuck bound must not follow a clock step (workers/clock.ts)
  setInterval(() => {
    const now = performance.now()
    for (const p of pending.values()) {
      if (!p.told && now - p.since > spec.stuckBoundMs) {
        p.told = true
        rec.record({ k: 'stuck', op: p.op, ms: Math.round(now - p.since) })
      }
    }
  }, 1000).unref()
  const recordError = (op: string, e: unknown) => rec.record({ k: 'err', op, ...describe(e) })
  const drainFlag = path.join(spec.dir, DRAIN_FILE)
  const drainWatch = setInterval(() => {
    if (draining || !existsSync(drainFlag)) return
    draining = true
    clearInterval(drainWatch)
    for (const fn of drainHooks) fn()
  }, 250)
  drainWatch.unref()
  process.on('SIGTERM', () => {
    if (stopping) return
    stopping = true
    void (async () => {
      for (const fn of stopHooks) await Promise.resolve(fn()).catch(() => undefined)
      process.exit(0)
    })()
  })
  process.on('unhandledRejection', (e) => recordError('unhandled', e))
  return {
    spec,
    rng: createRng(spec.seed),
    rec,
    kafka: kafkaFor(spec, spec.writer),
    async track(op, fn) {
      const id = nextOp++
      pending.set(id, { op, since: performance.now(), told: false })
      try {
        return await fn()
      } catch (e) {
        recordError(op, e)
        throw e
      } finally {
        pending.delete(id)
      }
    },
    recordError,
    get stopping() {
      return stopping
    },
    get draining() {
      return draining
    },
    onDrain: (fn) => void drainHooks.push(fn),
    onStop: (fn) => void stopHooks.push(fn),
    ready: () => void process.stdout.write('ready\n'),
  }
}

/** A consumer of the run's group with the run's session timeout; joins and crashes go to the history. */
export function groupMember(w: Worker<ConsumerSpec | TransformSpec>, groupId: string): Consumer {
  const c = w.kafka.consumer({
    groupId,
    sessionTimeout: w.spec.sessionTimeoutMs,
    heartbeatInterval: heartbeatIntervalFor(w.spec.sessionTimeoutMs),
    maxWaitTimeInMs: 300,
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 8 },
  })
  c.on(c.events.GROUP_JOIN, () => w.rec.record({ k: 'join', g: groupId }))
  c.on(c.events.CRASH, ({ payload }) => w.recordError(`crash(restart=${payload.restart})`, payload.error))
  return c
}
