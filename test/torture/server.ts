// A private PostgreSQL 15 for one torture run: its own data dirs under /tmp and free ports, so the run may restart
// it, fail it over (and count its deadlocks) without touching the machine's shared server. As root, the servers run
// as `postgres`. With a standby: a primary and a synchronous standby (every acknowledged COMMIT is on both), so a
// failover — the primary killed, the standby promoted — loses nothing a client was told is committed.
import { execFileSync } from 'node:child_process'
import { chownSync, mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'

const BIN = process.env.TORTURE_PG_BIN ?? '/usr/lib/postgresql/15/bin'

export interface PrivateServer {
  /** the primary's URL (another port after a failover) */
  readonly url: string
  readonly port: number
  /** fast shutdown of the primary, `downMs` without it, then start on the same port */
  restart(downMs: number): Promise<void>
  /** whether failover() can run: the server has a standby that is streaming synchronously */
  readonly canFailOver: boolean
  /**
   * The primary killed (immediate shutdown: a crash), the standby promoted, `onPromoted` told the new primary's port
   * (point the clients there), then the old primary rebuilt as the new one's synchronous standby.
   */
  failover(onPromoted: (port: number) => void): Promise<void>
  stop(): void
}

export async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

interface Node {
  dir: string
  port: number
  log: string
}

export async function startPrivateServer(opts: { standby?: boolean } = {}): Promise<PrivateServer> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'torture-pg-'))
  const asRoot = process.getuid?.() === 0
  if (asRoot) chownSync(root, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()))
  const run = (cmd: string, args: string[]) => {
    const file = path.join(BIN, cmd)
    execFileSync(asRoot ? 'runuser' : file, asRoot ? ['-u', 'postgres', '--', file, ...args] : args, { stdio: 'pipe', cwd: root })
  }
  const node = async (name: string): Promise<Node> => ({ dir: path.join(root, name), port: await freePort(), log: path.join(root, `${name}.log`) })
  const nodes = [await node('a'), await node('b')]
  let primary = 0
  let streaming = false
  // Without a standby commits need not wait for a flush (fsync is off anyway). With one they wait for the standby
  // (synchronous_commit on, synchronous_standby_names set by ALTER SYSTEM once it streams): that is what makes a
  // failover lose no acknowledged COMMIT. A standby retries its primary every 500 ms (after a restart, a promotion).
  const options = (n: Node) =>
    `-p ${n.port} -k ${root} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c full_page_writes=off ` +
    `-c synchronous_commit=${opts.standby ? 'on' : 'off'} -c wal_retrieve_retry_interval=500`
  const start = (n: Node) => run('pg_ctl', ['-D', n.dir, '-o', options(n), '-l', n.log, '-w', '-t', '60', 'start'])
  const stopNode = (n: Node, mode: 'fast' | 'immediate') => run('pg_ctl', ['-D', n.dir, '-m', mode, '-w', '-t', '60', 'stop'])
  const urlOf = (n: Node) => `postgres://postgres@127.0.0.1:${n.port}/postgres`
  const sql = async (n: Node, text: string) => {
    const client = new pg.Client({ connectionString: urlOf(n), connectionTimeoutMillis: 10_000 })
    await client.connect()
    try {
      return (await client.query(text)).rows
    } finally {
      await client.end()
    }
  }
  /** `n` made afresh as a synchronous standby of the primary, and the primary waiting for it */
  const makeStandby = async (n: Node) => {
    rmSync(n.dir, { recursive: true, force: true })
    const from = nodes[primary]
    run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(from.port), '-U', 'postgres', '-D', n.dir, '-R', '-X', 'stream', '-c', 'fast'])
    start(n)
    await sql(from, `ALTER SYSTEM SET synchronous_standby_names = '*'`)
    await sql(from, 'SELECT pg_reload_conf()')
    for (let i = 0; ; i++) {
      const rows = await sql(from, `SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync'`)
      if (rows.length > 0) break
      if (i > 600) throw new Error('the standby did not start streaming synchronously within 60 s')
      await new Promise((r) => setTimeout(r, 100))
    }
    streaming = true
  }
  run('initdb', ['-D', nodes[0].dir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'])
  start(nodes[0])
  if (opts.standby) await makeStandby(nodes[1])
  return {
    get url() {
      return urlOf(nodes[primary])
    },
    get port() {
      return nodes[primary].port
    },
    get canFailOver() {
      return streaming
    },
    async restart(downMs) {
      stopNode(nodes[primary], 'fast')
      await new Promise((r) => setTimeout(r, downMs))
      start(nodes[primary])
    },
    async failover(onPromoted) {
      if (!streaming) throw new Error('no synchronous standby to promote')
      streaming = false
      const old = nodes[primary]
      stopNode(old, 'immediate')
      primary = 1 - primary
      const promoted = nodes[primary]
      run('pg_ctl', ['-D', promoted.dir, '-w', '-t', '60', 'promote'])
      // no COMMIT may wait for a standby until the new one streams (a copy never carries the setting: set after it)
      await sql(promoted, 'ALTER SYSTEM RESET synchronous_standby_names')
      await sql(promoted, 'SELECT pg_reload_conf()')
      onPromoted(promoted.port)
      await makeStandby(old)
    },
    stop() {
      try {
        for (const n of nodes) {
          try {
            stopNode(n, 'fast')
          } catch {
            // not running (the standby of a run without one, a node being rebuilt)
          }
        }
      } finally {
        rmSync(root, { recursive: true, force: true })
      }
    },
  }
}
