// Server CPU of one client's PostgreSQL backends, read from /proc/<pid>/stat (utime + stime) of the backends whose
// application_name is the client's. Works when the bench runs on the database's machine (as root or as the server's
// user); otherwise `available` is false and the rows say so.
import fs from 'node:fs'
import { execFileSync } from 'node:child_process'
import type pg from 'pg'

let ticksPerSecond: number | undefined

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
    } catch {
      ticksPerSecond = 100
    }
  }
  return ticksPerSecond
}

/** CPU ms a process has used so far, or undefined when /proc does not show it (gone, other machine, no access). */
function cpuMs(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    // the command name may hold spaces: fields after its closing parenthesis, utime and stime are the 12th and 13th
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks()
  } catch {
    return undefined
  }
}

export interface BackendCpu {
  /** backends seen (at the start or since) */
  backends: number
  /** CPU ms used by them between start() and stop() */
  cpuMs: number
  available: boolean
}

/** Samples the backends of `applicationName` at start() and stop(); a backend that appears meanwhile counts whole. */
export function backendCpu(admin: pg.Pool, applicationName: string) {
  const start = new Map<number, number>()
  const pids = async () =>
    (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [applicationName])).rows.map((r) => r.pid)
  let available = true
  return {
    async start(): Promise<void> {
      start.clear()
      for (const pid of await pids()) {
        const ms = cpuMs(pid)
        if (ms === undefined) available = false
        else start.set(pid, ms)
      }
    },
    async stop(): Promise<BackendCpu> {
      let total = 0
      const seen = new Set(start.keys())
      for (const pid of await pids()) seen.add(pid)
      for (const pid of seen) {
        const ms = cpuMs(pid)
        // a backend gone since start() took its last CPU with it: only a lower bound is known then
        if (ms !== undefined) total += ms - (start.get(pid) ?? 0)
      }
      return { backends: seen.size, cpuMs: total, available: available && seen.size > 0 }
    },
  }
}
