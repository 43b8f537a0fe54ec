// The clock-step fault, preloaded into every worker (`node --import`): Date.now(), new Date() and Date()
// follow a step that the orchestrator sets at random times (it writes the worker's total step in ms to
// `<dir>/<writer>.clock`, then sends SIGUSR2), the way an NTP step or a VM resume moves the wall clock. Timers and
// performance.now() are monotonic and do not move, as on a real machine. The history keeps the true time: the
// recorder reads REAL_NOW (history.ts).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { createRecorder, REAL_NOW } from '../history.js'

export const clockFile = (dir: string, writer: string) => path.join(dir, `${writer}.clock`)

const spec = JSON.parse(process.env.TORTURE_SPEC ?? '{}') as { dir?: string; writer?: string }
if (spec.dir && spec.writer) {
  const RealDate = Date
  const realNow = RealDate.now.bind(RealDate)
  let stepMs = 0
  const now = () => realNow() + stepMs
  ;(globalThis as Record<symbol, unknown>)[REAL_NOW] = realNow
  globalThis.Date = new Proxy(RealDate, {
    construct: (target, args, newTarget) => Reflect.construct(target, args.length === 0 ? [now()] : args, newTarget),
    apply: () => new RealDate(now()).toString(),
    get: (target, prop, receiver) => (prop === 'now' ? now : Reflect.get(target, prop, receiver)),
  })
  const file = clockFile(spec.dir, spec.writer)
  const rec = createRecorder(spec.dir, spec.writer)
  process.on('SIGUSR2', () => {
    stepMs = Number(readFileSync(file, 'utf8')) || 0
    // what this process's clock says now, against the true time: the step did reach it
    rec.record({ k: 'stat', name: 'clock.offset', n: Date.now() - realNow() })
  })
}
