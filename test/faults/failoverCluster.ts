// Two real PostgreSQL 15 servers of the test's own: a primary and a streaming standby made with pg_basebackup -R,
// synchronous or asynchronous, on free 127.0.0.1 ports with data dirs under /tmp. Never the shared server. The
// primary can be killed the way a machine dies (SIGKILL to the postmaster and every backend at once) and the
// standby promoted with pg_ctl promote, as Patroni or a managed service would.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { promises as fs } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { afterAll } from 'vitest'
import { sleep } from './support.js'

const BIN = process.env.PG15_BIN ?? '/usr/lib/postgresql/15/bin'
const run = promisify(execFile)

export interface PgNode {
  name: string
  port: number
  dataDir: string
  url: string
  proc?: ChildProcess
}

export interface FailoverCluster {
  primary: PgNode
  standby: PgNode
  /** both hosts, primary first, with target_session_attrs=read-write */
  url: string
  /** SIGKILL to the primary's whole process group: postmaster, backends and walsenders die together */
  killPrimary(): void
  /** pg_ctl promote on the standby; resolves once it accepts writes */
  promote(): Promise<void>
  /** whatever still runs is killed and the data dirs are removed (also after the file) */
  destroy(): Promise<void>
}

const clusters = new Set<FailoverCluster>()
afterAll(async () => {
  for (const c of clusters) await c.destroy()
}, 60_000)

/** Runs as the postgres user when we are root: initdb and postgres refuse to run as root. */
async function owner(): Promise<{ uid?: number; gid?: number }> {
  if (process.getuid?.() !== 0) return {}
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])])
  return { uid: Number(uid), gid: Number(gid) }
}

async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** Polls until `fn` resolves truthy (each try on a fresh connection), or fails after timeoutMs. */
async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  while (Date.now() < deadline) {
    try {
      if (await fn()) return
    } catch (err) {
      last = err
    }
    await sleep(50)
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`)
}

export async function query<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  client.on('error', () => undefined)
  await client.connect()
  try {
    return (await client.query<R>(text)).rows
  } finally {
    await client.end().catch(() => undefined)
  }
}

const conf = (port: number, dataDir: string, extra: string[]) =>
  [
    "listen_addresses = '127.0.0.1'",
    `port = ${port}`,
    `unix_socket_directories = '${dataDir}'`,
    'wal_level = replica',
    'max_wal_senders = 4',
    'hot_standby = on',
    'max_connections = 100',
    'shared_buffers = 32MB',
    // a SIGKILLed process loses nothing the kernel already has: fsync only matters when the machine itself dies
    'fsync = off',
    ...extra,
  ].join('\n') + '\n'

export async function startFailoverCluster(label: string, mode: 'sync' | 'async'): Promise<FailoverCluster> {
  const who = await owner()
  const root = await fs.mkdtemp(path.join(os.tmpdir(), `pgq-failover-${label}-`))
  if (who.uid !== undefined) await fs.chown(root, who.uid, who.gid!)
  // cwd: the postgres user may not be allowed into ours
  const as = { uid: who.uid, gid: who.gid, cwd: root }
  const primary: PgNode = { name: 'primary', port: await freePort(), dataDir: path.join(root, 'primary'), url: '' }
  const standby: PgNode = { name: 'standby', port: await freePort(), dataDir: path.join(root, 'standby'), url: '' }
  for (const n of [primary, standby]) n.url = `postgres://postgres@127.0.0.1:${n.port}/postgres`

  const start = (node: PgNode) => {
    // detached: the postmaster leads a process group of its own, so one kill reaches every backend
    node.proc = spawn(path.join(BIN, 'postgres'), ['-D', node.dataDir], { ...as, detached: true, stdio: ['ignore', 'ignore', 'pipe'] })
    const log: string[] = []
    node.proc.stderr!.on('data', (d: Buffer) => log.push(d.toString()))
    node.proc.on('exit', () => node.proc && (node.proc = undefined))
    return until(`${node.name} to accept connections`, async () => (await query(node.url, 'SELECT 1')).length === 1).catch((err: Error) => {
      throw new Error(`${err.message}\n${log.join('').slice(-2000)}`)
    })
  }
  const stopAll = () => {
    for (const n of [primary, standby]) {
      if (n.proc?.pid) {
        try {
          process.kill(-n.proc.pid, 'SIGKILL')
        } catch {
          // already gone
        }
      }
    }
  }

  const cluster: FailoverCluster = {
    primary,
    standby,
    url: `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/postgres?target_session_attrs=read-write`,
    killPrimary() {
      process.kill(-primary.proc!.pid!, 'SIGKILL')
    },
    async promote() {
      await run(path.join(BIN, 'pg_ctl'), ['promote', '-D', standby.dataDir, '-W'], as)
      await until('the standby to leave recovery', async () => {
        const [row] = await query<{ r: boolean }>(standby.url, 'SELECT pg_is_in_recovery() AS r')
        return row?.r === false
      })
    },
    async destroy() {
      clusters.delete(cluster)
      stopAll()
      await fs.rm(root, { recursive: true, force: true })
    },
  }
  clusters.add(cluster)

  await run(path.join(BIN, 'initdb'), ['-D', primary.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], as)
  await fs.appendFile(primary.dataDir + '/postgresql.conf', conf(primary.port, primary.dataDir, []))
  await start(primary)
  await run(
    path.join(BIN, 'pg_basebackup'),
    ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', standby.dataDir, '-R', '-X', 'stream', '--no-sync'],
    as,
  )
  // after the base backup, so the standby does not inherit it: once promoted it has no standby to wait for
  await fs.appendFile(
    standby.dataDir + '/postgresql.conf',
    conf(standby.port, standby.dataDir, ["cluster_name = 'standby1'", "synchronous_standby_names = ''"]),
  )
  await start(standby)
  if (mode === 'sync') {
    await query(primary.url, "ALTER SYSTEM SET synchronous_standby_names = 'standby1'")
    await query(primary.url, 'SELECT pg_reload_conf()')
  }
  await until(`the standby streaming (${mode})`, async () => {
    const rows = await query<{ sync_state: string }>(
      primary.url,
      "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1' AND state = 'streaming'",
    )
    return rows[0]?.sync_state === mode
  })
  return cluster
}
