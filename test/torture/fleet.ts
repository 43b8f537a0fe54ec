// The worker processes of a run: one slot per worker, respawned (as a new incarnation with a new writer id) after
// it was killed or crashed, until the run stops it. Signals go to the slot's current process.
import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Recorder } from './history.js'
import { hashString } from './rng.js'
import type { WorkerSpec } from './spec.js'

// run from the repository root (npm run check:torture), as the other suites spawn their fixtures
const WORKERS = path.resolve('test/torture/workers')
/** every worker runs under the clock-step hook (workers/clock.ts); without a step it changes nothing */
const CLOCK_HOOK = pathToFileURL(path.join(WORKERS, 'clock.ts')).href

type Without<S, K extends PropertyKey> = S extends unknown ? Omit<S, K> : never
export type SlotSpec = Without<WorkerSpec, 'writer' | 'seed'>
/** what a run decides per slot; the rest is common to every worker */
export type SlotPlan = Without<SlotSpec, 'dir' | 'stuckBoundMs' | 'sessionTimeoutMs' | 'transport' | 'schema' | 'brokers'>

export interface Slot {
  spec: SlotSpec
  incarnation: number
  writer: string
  proc?: ChildProcess
  stopped: boolean
  /** the run no longer respawns it */
  retired: boolean
  exited: Promise<void>
  /** resolves when the current incarnation said it is working */
  ready: Promise<void>
}

export class Fleet {
  readonly slots: Slot[] = []
  private respawns = new Set<NodeJS.Timeout>()

  constructor(
    private readonly rec: Recorder,
    private readonly seed: number,
    /** the application_name of a writer's connections, so faults can find them */
    private readonly urlFor: (writer: string) => string | undefined,
  ) {}

  add(spec: SlotSpec): Slot {
    const slot: Slot = { spec, incarnation: -1, writer: '', stopped: false, retired: false, exited: Promise.resolve(), ready: Promise.resolve() }
    this.slots.push(slot)
    this.spawn(slot)
    return slot
  }

  private spawn(slot: Slot) {
    slot.incarnation++
    slot.writer = `${slot.spec.id}.${slot.incarnation}`
    slot.stopped = false
    const spec = {
      ...slot.spec,
      writer: slot.writer,
      seed: (this.seed ^ hashString(slot.writer)) >>> 0,
      pgUrl: this.urlFor(slot.writer),
    } as WorkerSpec
    const proc = spawn(process.execPath, ['--import', 'tsx', '--import', CLOCK_HOOK, path.join(WORKERS, `${spec.role}.ts`)], {
      env: { ...process.env, TORTURE_SPEC: JSON.stringify(spec) },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    slot.ready = new Promise((resolve) => {
      proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => chunk.includes('ready') && resolve())
      proc.on('exit', () => resolve())
    })
    proc.stderr!.pipe(createWriteStream(path.join(spec.dir, `${slot.writer}.stderr`)))
    slot.proc = proc
    const writer = slot.writer
    slot.exited = new Promise((resolve) =>
      proc.on('exit', (code, signal) => {
        this.rec.record({ k: 'exit', target: writer, code, signal })
        if (slot.proc === proc) slot.proc = undefined
        // a crash (not a kill of ours, not the end of the run) is restarted like a kill
        if (!slot.retired && slot.writer === writer) this.respawnLater(slot, 1000)
        resolve()
      }),
    )
  }

  respawnLater(slot: Slot, ms: number) {
    const timer = setTimeout(() => {
      this.respawns.delete(timer)
      if (slot.retired || slot.proc) return
      this.rec.record({ k: 'fault', f: 'respawn', target: slot.spec.id })
      this.spawn(slot)
    }, ms)
    this.respawns.add(timer)
  }

  live(filter: (s: Slot) => boolean = () => true): Slot[] {
    return this.slots.filter((s) => s.proc && !s.retired && filter(s))
  }

  signal(slot: Slot, sig: NodeJS.Signals) {
    slot.proc?.kill(sig)
  }

  /** Respawns what is down now and lets the pending respawns happen (before the drain). */
  async settle() {
    for (const slot of this.slots) {
      if (slot.stopped) this.cont(slot)
      if (!slot.proc && !slot.retired) this.spawn(slot)
    }
  }

  cont(slot: Slot) {
    if (!slot.stopped) return
    slot.stopped = false
    this.signal(slot, 'SIGCONT')
    this.rec.record({ k: 'fault', f: 'cont', target: slot.writer })
  }

  /** SIGTERM, then SIGKILL after `graceMs`; the slot is not respawned. */
  async retire(slots: Slot[], graceMs: number): Promise<Slot[]> {
    for (const s of slots) {
      s.retired = true
      this.cont(s)
      this.signal(s, 'SIGTERM')
    }
    const late: Slot[] = []
    await Promise.all(
      slots.map(async (s) => {
        const timer = setTimeout(() => {
          if (s.proc) late.push(s)
          this.signal(s, 'SIGKILL')
        }, graceMs)
        await s.exited
        clearTimeout(timer)
      }),
    )
    return late
  }

  async killAll() {
    for (const t of this.respawns) clearTimeout(t)
    for (const s of this.slots) {
      s.retired = true
      this.signal(s, 'SIGKILL')
    }
    await Promise.all(this.slots.map((s) => s.exited))
  }
}
