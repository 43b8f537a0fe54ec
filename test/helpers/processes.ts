// Child processes running test fixtures, with their stdout split into lines as they arrive.
import { spawn, type ChildProcess } from 'node:child_process'
import { resolve } from 'node:path'
import { afterAll } from 'vitest'

export interface Child {
  proc: ChildProcess
  lines: string[]
  /** resolves when a line satisfying the predicate has arrived */
  waitForLine(predicate: (line: string) => boolean, timeoutMs?: number): Promise<string>
  exited: Promise<number | null>
}

const running = new Set<ChildProcess>()
afterAll(() => {
  for (const p of running) p.kill('SIGKILL')
})

export function spawnFixture(fixture: string, env: Record<string, string>): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', resolve('test/fixtures', fixture)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  running.add(proc)
  const lines: string[] = []
  const waiters: Array<{ predicate: (l: string) => boolean; resolve: (l: string) => void; exited: (code: number | null) => void }> = []
  let partial = ''
  proc.stdout!.setEncoding('utf8')
  proc.stdout!.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n')
    partial = parts.pop()!
    for (const line of parts) {
      lines.push(line)
      for (const w of [...waiters]) {
        if (w.predicate(line)) {
          waiters.splice(waiters.indexOf(w), 1)
          w.resolve(line)
        }
      }
    }
  })
  const exited = new Promise<number | null>((res) =>
    proc.on('exit', (code) => {
      running.delete(proc)
      res(code)
    }),
  )
  // on 'close' (not 'exit') every line the child wrote has been read: a waiter still waiting will wait in vain
  let exitCode: number | null | undefined
  proc.on('close', (code) => {
    exitCode = code
    for (const w of waiters.splice(0)) w.exited(code)
  })
  return {
    proc,
    lines,
    exited,
    waitForLine(predicate, timeoutMs = 30_000) {
      const found = lines.find(predicate)
      if (found !== undefined) return Promise.resolve(found)
      const last = () => lines.slice(-3).join(' | ')
      // a child that ended cannot print the line any more: fail now with its exit, not after the timeout
      const ended = (code: number | null) =>
        new Error(`${fixture} (pid ${proc.pid}) ended (exit ${code ?? proc.signalCode}) without a matching line; last lines: ${last()}`)
      if (exitCode !== undefined) return Promise.reject(ended(exitCode))
      return new Promise((res, rej) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1)
          rej(new Error(`no matching line from ${fixture} (pid ${proc.pid}) within ${timeoutMs} ms; last lines: ${last()}`))
        }, timeoutMs)
        const waiter = {
          predicate,
          resolve: (l: string) => (clearTimeout(timer), res(l)),
          exited: (code: number | null) => (clearTimeout(timer), rej(ended(code))),
        }
        waiters.push(waiter)
      })
    },
  }
}
