// Shared pieces of the fault suite: a PostgreSQL server of the test's own (so it can be restarted without touching
// the shared one), connection strings tagged with an application_name (so a test only ever counts or terminates
// its own backends), the fixtures' stdout parsed into facts, and a watcher that polls committed offsets.
import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll } from 'vitest'
import { ensureEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js'
import type { Child } from '../helpers/processes.js'

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** `url` with `?application_name=name`: pg lets the URL win over the pool's own application_name. */
export function withAppName(url: string, name: string): string {
  const u = new URL(url)
  u.searchParams.set('application_name', name)
  return u.toString()
}

export const uniqueAppName = (label: string) => `pgq_${label}_${randomBytes(4).toString('hex')}`

/** Backends (any state) opened with this application_name. */
export async function countBackends(q: pg.Pool | pg.Client, appName: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [appName])
  return rows[0].n
}

export interface OwnServer {
  url: string
  dataDir: string
  /** fast shutdown (what `pg_ctl stop -m fast` does): sessions are terminated with 57P01, open transactions rolled back */
  stop(): Promise<void>
  /** starts it again on the same port with the same password, so every client's connection string stays valid */
  start(): Promise<void>
}

// servers started by this test file: stopped and removed after it (registered at import, so at file level)
const ownServers = new Set<OwnServer>()
afterAll(async () => {
  for (const s of ownServers) {
    await s.stop().catch(() => undefined)
    await fs.rm(s.dataDir, { recursive: true, force: true })
  }
  ownServers.clear()
}, 60_000)

/**
 * An embedded PostgreSQL in a temp dir of this test file, stopped and removed after the file. Never the shared server:
 * restarting that one would break every other test run on the machine.
 */
export async function startOwnServer(label: string): Promise<OwnServer> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `pgq-fault-${label}-`))
  let server: EmbeddedServer | undefined = await ensureEmbeddedPostgres({ dataDir, port: 0 })
  const url = server.connectionString
  const own: OwnServer = {
    url,
    dataDir,
    async stop() {
      const s = server
      server = undefined
      await s?.stop()
    },
    async start() {
      if (server) return
      server = await ensureEmbeddedPostgres({ dataDir, port: 0 })
      if (server.connectionString !== url) throw new Error(`restarted server moved: ${server.connectionString} != ${url}`)
    },
  }
  ownServers.add(own)
  return own
}

// ---- fixture output -------------------------------------------------------------------------

export interface Handled {
  value: string
  offset: number
  partition: number
  start: number
  end: number
  worker: number
}

/** `m <value> <offset> <partition> <start> <end>` lines of the consumers, tagged with the consumer's index. */
export function handled(children: Child[]): Handled[] {
  return children.flatMap((c, worker) =>
    c.lines
      .filter((l) => l.startsWith('m '))
      .map((l) => {
        const [, value, offset, partition, start, end] = l.split(' ')
        return { value, offset: Number(offset), partition: Number(partition), start: Number(start), end: Number(end), worker }
      }),
  )
}

/** Values a stream producer had acknowledged (`ack <first> <last> <ms>` of messages `<tag>-<n>`). */
export function acked(child: Child, tag: string): string[] {
  const out: string[] = []
  for (const l of child.lines) {
    if (!l.startsWith('ack ')) continue
    const [, first, last] = l.split(' ')
    for (let n = Number(first); n <= Number(last); n++) out.push(`${tag}-${n}`)
  }
  return out
}

/** Times of the producer's acknowledgements. */
export const ackTimes = (child: Child) => child.lines.filter((l) => l.startsWith('ack ')).map((l) => Number(l.split(' ')[3]))

export interface ProducerError {
  at: number
  name: string
  retriable: boolean
  causeName: string
  causeRetriable: boolean
  message: string
}

export function producerErrors(child: Child): ProducerError[] {
  return child.lines
    .filter((l) => l.startsWith('err '))
    .map((l) => {
      const [, at, name, retriable, causeName, causeRetriable, ...rest] = l.split(' ')
      return { at: Number(at), name, retriable: retriable === 'true', causeName, causeRetriable: causeRetriable === 'true', message: rest.join(' ') }
    })
}

/** Commits reported by a consumer (`c <partition> <offset> <ms>`). */
export function commits(child: Child): Array<{ partition: number; offset: number; at: number }> {
  return child.lines
    .filter((l) => l.startsWith('c '))
    .map((l) => {
      const [, partition, offset, at] = l.split(' ')
      return { partition: Number(partition), offset: Number(offset), at: Number(at) }
    })
}

/** Within each key (`<key>:<n>` values or the `KEY_OF` function), the first delivery of each message comes in order. */
export function orderViolations(all: Handled[], keyOf: (v: string) => string, seqOf: (v: string) => number): number {
  const byKey = new Map<string, Handled[]>()
  for (const h of [...all].sort((a, b) => a.start - b.start || a.end - b.end)) {
    const key = keyOf(h.value)
    let list = byKey.get(key)
    if (!list) byKey.set(key, (list = []))
    list.push(h)
  }
  let violations = 0
  for (const list of byKey.values()) {
    let highest = -1
    const seen = new Set<string>()
    for (const h of list) {
      if (seen.has(h.value)) continue // a redelivery after a takeover replays older messages: not a reordering
      seen.add(h.value)
      const n = seqOf(h.value)
      if (n < highest) violations++
      highest = Math.max(highest, n)
    }
  }
  return violations
}

export interface Tally {
  sent: number
  delivered: number
  duplicates: number
  lost: string[]
}

/** Sent (acknowledged) against delivered: unique deliveries, extra deliveries, and acknowledged values never delivered. */
export function tally(sent: string[], deliveries: Handled[]): Tally {
  const seen = new Set(deliveries.map((h) => h.value))
  return {
    sent: new Set(sent).size,
    delivered: seen.size,
    duplicates: deliveries.length - seen.size,
    lost: [...new Set(sent)].filter((v) => !seen.has(v)),
  }
}

// ---- committed offsets ------------------------------------------------------------------------

export interface OffsetRegression {
  partition: number
  from: string
  to: string
  at: number
}

/**
 * Polls a group's committed offsets every `intervalMs` through a connection of its own (reopened when the server
 * goes away) and records every time one moved backwards.
 */
export function watchOffsets(url: string, schema: string, prefix: string, group: string, intervalMs = 100) {
  const last = new Map<number, bigint>()
  const regressions: OffsetRegression[] = []
  let samples = 0
  let client: pg.Client | undefined
  let stopped = false
  const table = `"${schema}"."${prefix}_consumer_offset"`
  const loop = (async () => {
    while (!stopped) {
      try {
        if (!client) {
          const c = new pg.Client({ connectionString: withAppName(url, 'pgq_offset_watch'), connectionTimeoutMillis: 1000 })
          c.on('error', () => undefined)
          await c.connect()
          client = c
        }
        const { rows } = await client.query<{ partition_id: number; offset_value: string }>(
          `SELECT partition_id, offset_value::text FROM ${table} WHERE consumer_group = $1`,
          [group],
        )
        samples++
        for (const r of rows) {
          const value = BigInt(r.offset_value)
          const before = last.get(r.partition_id)
          if (before !== undefined && value < before) {
            regressions.push({ partition: r.partition_id, from: before.toString(), to: value.toString(), at: Date.now() })
          }
          last.set(r.partition_id, value)
        }
      } catch {
        await client?.end().catch(() => undefined)
        client = undefined
      }
      await sleep(intervalMs)
    }
    await client?.end().catch(() => undefined)
  })()
  return {
    regressions,
    get samples() {
      return samples
    },
    latest: () => new Map(last),
    async stop() {
      stopped = true
      await loop
    },
  }
}

/** Index of the first line at or after `from` that satisfies `predicate`, waiting for it (polls the child's lines). */
export async function lineAfter(child: Child, from: number, predicate: (line: string) => boolean, timeoutMs = 30_000): Promise<number> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    for (let i = from; i < child.lines.length; i++) if (predicate(child.lines[i])) return i
    if (Date.now() > deadline) throw new Error(`no matching line within ${timeoutMs} ms; last lines: ${child.lines.slice(-3).join(' | ')}`)
    if (child.proc.exitCode !== null) throw new Error(`child exited (${child.proc.exitCode}); last lines: ${child.lines.slice(-3).join(' | ')}`)
    await sleep(5)
  }
}
