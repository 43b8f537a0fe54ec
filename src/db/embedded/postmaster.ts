// The server a data directory already has: postmaster.pid, whether that pid is a live postgres, and stopping it.
import { existsSync, promises as fs, readFileSync } from 'node:fs'
import path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'

export function clusterDirOf(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'cluster')
}

export interface PostmasterInfo {
  pid: number
  port: number
}

/** postmaster.pid: line 1 pid, line 4 port (PostgreSQL >= 10). */
export function readPostmasterPid(clusterDir: string): PostmasterInfo | undefined {
  let text: string
  try {
    text = readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8')
  } catch {
    return undefined
  }
  const lines = text.split('\n')
  const pid = Number.parseInt(lines[0] ?? '', 10)
  const port = Number.parseInt(lines[3] ?? '', 10)
  return Number.isInteger(pid) && pid > 0 ? { pid, port: Number.isInteger(port) ? port : 0 } : undefined
}

/**
 * Alive and, where /proc tells, really a postgres (pids get recycled after a reboot or container
 * restart) and not a zombie (an orphan whose new parent, e.g. a container's PID 1, never reaps it).
 */
export function isPostgresAlive(pid: number): boolean {
  if (!isAlive(pid)) return false
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return existsSync('/proc/self/stat') ? false : true // no /proc at all (macOS): trust kill(0)
  }
  // "<pid> (<comm>) <state> ...": comm may contain spaces, so split at the last ')'
  const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  return comm.startsWith('postgres') && state !== 'Z' && state !== 'X'
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Stops whatever server runs on a data dir, whoever started it (fast shutdown), and waits for it to exit.
 * For tools and tests that clean up after a killed parent; ordinary callers use `stop()`.
 */
export async function stopEmbeddedPostgres(dataDir: string, timeoutMs = 15_000): Promise<boolean> {
  const info = readPostmasterPid(clusterDirOf(dataDir))
  if (!info || !isPostgresAlive(info.pid)) return false
  process.kill(info.pid, 'SIGINT')
  const deadline = Date.now() + timeoutMs
  while (isPostgresAlive(info.pid)) {
    if (Date.now() > deadline) throw new Error(`embedded PostgreSQL pid ${info.pid} did not stop within ${timeoutMs} ms`)
    await delay(50)
  }
  return true
}

export async function removeStaleState(dataDir: string, clusterDir: string): Promise<void> {
  // we hold the lock and no live server owns the cluster: the pid file and scratch dirs are leftovers
  await fs.rm(path.join(clusterDir, 'postmaster.pid'), { force: true })
  for (const name of await fs.readdir(dataDir)) {
    if (name.startsWith('cluster.init-')) await fs.rm(path.join(dataDir, name), { recursive: true, force: true })
  }
}
