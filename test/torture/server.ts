// A private PostgreSQL 15 for one torture run: its own data dir under /tmp and a free port, so the run may restart
// it (and count its deadlocks) without touching the machine's shared server. As root, the server runs as `postgres`.
import { execFileSync } from 'node:child_process'
import { chownSync, mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'

const BIN = process.env.TORTURE_PG_BIN ?? '/usr/lib/postgresql/15/bin'

export interface PrivateServer {
  url: string
  port: number
  /** fast shutdown, `downMs` without a server, then start on the same port */
  restart(downMs: number): Promise<void>
  stop(): void
}

export async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

export async function startPrivateServer(): Promise<PrivateServer> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'torture-pg-'))
  const dataDir = path.join(root, 'data')
  const asRoot = process.getuid?.() === 0
  if (asRoot) chownSync(root, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()))
  const run = (cmd: string, args: string[]) => {
    const file = path.join(BIN, cmd)
    execFileSync(asRoot ? 'runuser' : file, asRoot ? ['-u', 'postgres', '--', file, ...args] : args, { stdio: 'pipe', cwd: root })
  }
  run('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'])
  const port = await freePort()
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`
  const start = () => run('pg_ctl', ['-D', dataDir, '-o', options, '-l', path.join(root, 'log'), '-w', '-t', '60', 'start'])
  const stop = () => run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', '-t', '60', 'stop'])
  start()
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async restart(downMs) {
      stop()
      await new Promise((r) => setTimeout(r, downMs))
      start()
    },
    stop() {
      try {
        stop()
      } finally {
        rmSync(root, { recursive: true, force: true })
      }
    },
  }
}
