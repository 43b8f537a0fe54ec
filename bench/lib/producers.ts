// Producers in child processes (bench/producer.ts): start them, wait until all are connected and warmed up, release
// them at once, and collect their reports.
import { fork } from 'node:child_process'
import path from 'node:path'
import type { ProducerConfig, ProducerMessage } from '../producer.js'

type Done = Extract<ProducerMessage, { type: 'done' }>

export interface Producers {
  /** resolves once every producer has sent its `total` (or was stopped) */
  done: Promise<Done[]>
  /** ends fixed-rate producers */
  stop(): void
}

/** Starts the producers and resolves once they are all sending. */
export async function startProducers(configs: ProducerConfig[]): Promise<Producers> {
  const procs = configs.map((c) =>
    fork(path.join(__dirname, '..', 'producer.ts'), [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, BENCH_PRODUCER: JSON.stringify(c) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  )
  const ready: Promise<void>[] = []
  const done = procs.map((proc) => {
    let readyNow: () => void
    ready.push(new Promise<void>((resolve) => (readyNow = resolve)))
    return new Promise<Done>((resolve, reject) => {
      proc.on('message', (m: ProducerMessage) => (m.type === 'ready' ? readyNow() : resolve(m)))
      // 'close', not 'exit': the channel is drained by then, so a report sent just before exiting has arrived
      proc.on('close', (code, signal) => reject(new Error(`bench producer ${proc.pid} exited (${signal ?? code}) before reporting`)))
    })
  })
  const all = Promise.all(done).then((reports) => {
    const failed = reports.find((r) => r.error)
    if (failed) throw new Error(failed.error)
    return reports
  })
  all.catch(() => undefined)
  await Promise.race([Promise.all(ready), all])
  for (const proc of procs) proc.send({ type: 'go' })
  return { done: all, stop: () => procs.forEach((proc) => proc.connected && proc.send({ type: 'stop' })) }
}
