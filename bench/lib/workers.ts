// Consumer group members in child processes (bench/worker.ts): start, let the group settle, release them all at
// once, wait until every partition has been read to its end, stop and collect what they saw.
import { fork, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import type { WorkerConfig, WorkerMessage } from '../worker.js'

type Done = Extract<WorkerMessage, { type: 'done' }>
type Progress = Extract<WorkerMessage, { type: 'progress' }>

export interface Member {
  config: WorkerConfig
  proc: ChildProcess
  assignment: Record<string, number[]> | null
  progress: Progress | null
  done: Promise<Done>
  exited: boolean
}

const workerFile = path.join(__dirname, '..', 'worker.ts')

/** `worker`: another checkout's bench/worker.ts, for an A/B of two trees (bench/tools/consume-ab.ts). */
export function startMember(config: WorkerConfig, worker = workerFile): Member {
  const proc = fork(worker, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_WORKER: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const member: Member = { config, proc, assignment: null, progress: null, done: undefined as never, exited: false }
  member.done = new Promise<Done>((resolve, reject) => {
    proc.on('message', (m: WorkerMessage) => {
      if (m.type === 'joined') member.assignment = m.assignment
      else if (m.type === 'progress') member.progress = m
      else if (m.type === 'done') resolve(m)
    })
    proc.on('exit', (code, signal) => {
      member.exited = true
      reject(new Error(`bench worker ${proc.pid} exited (${signal ?? code}) before reporting`))
    })
  })
  member.done.catch(() => undefined)
  return member
}

async function until(what: string, timeoutMs: number, members: Member[], ok: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!ok()) {
    const dead = members.find((m) => m.exited)
    if (dead) throw new Error(`bench worker ${dead.proc.pid} exited while waiting for ${what}`)
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** Every group has all its members in a settled assignment: no partition twice, all partitions covered. */
function settled(groups: Map<string, Member[]>, topic: string, partitions: number): boolean {
  for (const members of groups.values()) {
    const seen = new Set<number>()
    for (const m of members) {
      const mine = m.assignment?.[topic]
      if (!mine || mine.length === 0) return false
      for (const p of mine) {
        if (seen.has(p)) return false
        seen.add(p)
      }
    }
    if (seen.size !== partitions) return false
  }
  return true
}

export interface GroupResult {
  groupId: string
  members: Done[]
  /** deliveries (including duplicates) */
  count: number
  /** when the members were released (resumed) */
  goAt: number
  firstAt: number
  lastAt: number
  /** deliveries / (lastAt - firstAt) */
  perSecond: number
  duplicates: number
  rssPeak: number
}

/**
 * Runs `configs` (members of one or more groups on one topic of `partitions` partitions) until each group has
 * read every partition up to its log end: `ends` (partition → log-end offset), or what `produce` returns after
 * producing while the members run. Timing per group: first to last delivery.
 */
export async function runMembers(
  configs: WorkerConfig[],
  topic: string,
  partitions: number,
  ends: Map<number, number> | (() => Promise<Map<number, number>>),
  opts: { joinTimeoutMs?: number; drainTimeoutMs?: number; worker?: string } = {},
): Promise<GroupResult[]> {
  const members = configs.map((c) => startMember(c, opts.worker))
  const groups = new Map<string, Member[]>()
  for (const m of members) groups.set(m.config.groupId, [...(groups.get(m.config.groupId) ?? []), m])
  const drainedAt = new Map<string, number>()
  let target = new Map<number, number>()
  let goAt: number
  try {
    const joinTimeout = opts.joinTimeoutMs ?? 120_000
    await until('the group(s) to settle', joinTimeout, members, () => settled(groups, topic, partitions))
    // settled twice, 300 ms apart: no rebalance was still under way
    await new Promise((r) => setTimeout(r, 300))
    await until('the group(s) to settle', joinTimeout, members, () => settled(groups, topic, partitions))
    goAt = performance.timeOrigin + performance.now()
    for (const m of members) m.proc.send({ type: 'go' })
    target = typeof ends === 'function' ? await ends() : ends
    const expected = [...target.values()].reduce((a, b) => a + b, 0)
    await until(`${expected} messages per group`, opts.drainTimeoutMs ?? 600_000, members, () => {
      for (const [groupId, g] of groups) {
        if (drainedAt.has(groupId)) continue
        const complete = [...target].every(([p, end]) => end === 0 || g.some((m) => (m.progress?.maxOffsets[p] ?? -1) >= end - 1))
        // the end is the last delivery the reports showed when the group was done (later ones are duplicates)
        if (complete) drainedAt.set(groupId, Math.max(...g.map((m) => m.progress?.lastAt ?? 0)))
      }
      return drainedAt.size === groups.size
    })
  } finally {
    for (const m of members) if (!m.exited) m.proc.send({ type: 'stop' })
  }
  const expected = [...target.values()].reduce((a, b) => a + b, 0)
  const results: GroupResult[] = []
  for (const [groupId, group] of groups) {
    const done = await Promise.all(group.map((m) => m.done))
    const failed = done.find((d) => d.error)
    if (failed) throw new Error(failed.error)
    const firstAt = Math.min(...done.filter((d) => d.count > 0).map((d) => d.firstAt))
    const lastAt = drainedAt.get(groupId)!
    const count = done.reduce((n, d) => n + d.count, 0)
    results.push({
      groupId,
      members: done,
      count,
      goAt,
      firstAt,
      lastAt,
      perSecond: expected / (Math.max(lastAt - firstAt, 1) / 1000),
      duplicates: count - expected,
      rssPeak: Math.max(...done.map((d) => d.rssPeak)),
    })
  }
  return results
}
