import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { ensureEmbeddedPostgres } from '../../../src/db/embedded.js'
import { clusterDirOf, isPostgresAlive, readPostmasterPid, stopEmbeddedPostgres } from '../../../src/db/embedded/postmaster.js'
import type { PgQueueConfig } from '../../../src/config/types.js'
import { resolvePoolConfig } from '../../../src/db/connection.js'
import { deferred } from '../../helpers/db.js'

const REPO = path.resolve(__dirname, '../../..')
const dataDir = mkdtempSync(path.join(tmpdir(), 'pgq-embedded-'))

afterAll(async () => {
  await stopEmbeddedPostgres(dataDir).catch(() => {})
  rmSync(dataDir, { recursive: true, force: true })
})

async function queryOnce(connectionString: string): Promise<string> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    const { rows } = await client.query<{ db: string }>('SELECT current_database() AS db')
    return rows[0]!.db
  } finally {
    await client.end()
  }
}

// zombie-aware: an orphan reparented to a PID 1 that never reaps stays in the table after exiting
const alive = isPostgresAlive

/** A pid that certainly belonged to a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''])
  await new Promise((resolve) => child.once('exit', resolve))
  return child.pid!
}

// the cases share one data dir and run in order: each starts from the state the previous one left
describe.sequential('ensureEmbeddedPostgres', () => {
  it('reuses the server a SIGKILLed parent left running', async () => {
    const started = deferred<{ connectionString: string; reused: boolean }>()
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `require('./src/db/embedded.ts').ensureEmbeddedPostgres({ dataDir: process.env.PGQ_DIR })
           .then((s) => { process.stdout.write(JSON.stringify(s) + '\\n'); setInterval(() => {}, 60000) })
           .catch((e) => { console.error(e); process.exit(1) })`,
      ],
      { cwd: REPO, env: { ...process.env, PGQ_DIR: dataDir }, stdio: ['ignore', 'pipe', 'inherit'] },
    )
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)))
    void exited.then(() => started.reject(new Error('child exited before the server was ready')))
    createInterface({ input: child.stdout! }).once('line', (line) => started.resolve(JSON.parse(line)))

    const first = await started.promise
    expect(first.reused).toBe(false)
    const postmaster = readPostmasterPid(clusterDirOf(dataDir))!
    expect(alive(postmaster.pid)).toBe(true)

    child.kill('SIGKILL')
    expect(await exited).toBe('SIGKILL')
    expect(alive(postmaster.pid)).toBe(true) // the orphan keeps running

    const logs: string[] = []
    const second = await ensureEmbeddedPostgres({ dataDir, log: (m) => logs.push(m) })
    expect(second.reused).toBe(true)
    expect(second.connectionString).toBe(first.connectionString)
    expect(await queryOnce(second.connectionString)).toBe('pgqueue')
    expect(logs).toHaveLength(1)
    expect(logs[0]).toContain(clusterDirOf(dataDir))
    expect(logs[0]).toContain(`127.0.0.1:${postmaster.port}`)
    expect(logs[0]).not.toContain(new URL(first.connectionString).password)

    // stop() of a reused server leaves it alone; the explicit helper stops it
    await second.stop()
    expect(await queryOnce(second.connectionString)).toBe('pgqueue')
    expect(await stopEmbeddedPostgres(dataDir)).toBe(true)
    expect(alive(postmaster.pid)).toBe(false)
  })

  it('starts afresh over a stale postmaster.pid, on the remembered port, and stops what it started', async () => {
    const before = readPostmasterPid(clusterDirOf(dataDir))
    expect(before).toBeUndefined()
    const stalePid = await deadPid()
    writeFileSync(
      path.join(clusterDirOf(dataDir), 'postmaster.pid'),
      `${stalePid}\n${clusterDirOf(dataDir)}\n1700000000\n5\n\n127.0.0.1\n  0  0\nready   \n`,
    )
    const server = await ensureEmbeddedPostgres({ dataDir })
    expect(server.reused).toBe(false)
    expect(await queryOnce(server.connectionString)).toBe('pgqueue')
    const running = readPostmasterPid(clusterDirOf(dataDir))!
    expect(running.pid).not.toBe(stalePid)
    const remembered = JSON.parse(readFileSync(path.join(dataDir, 'embedded.json'), 'utf8')) as { port: number }
    expect(running.port).toBe(remembered.port)
    expect(server.connectionString).toContain(`:${remembered.port}/`)
    await server.stop()
    expect(alive(running.pid)).toBe(false)
  })

  it('two concurrent starters end with one server', async () => {
    const [a, b] = await Promise.all([ensureEmbeddedPostgres({ dataDir }), ensureEmbeddedPostgres({ dataDir })])
    expect([a.reused, b.reused].sort()).toEqual([false, true])
    expect(a.connectionString).toBe(b.connectionString)
    expect(await queryOnce(a.connectionString)).toBe('pgqueue')
    const owner = a.reused ? b : a
    const pid = readPostmasterPid(clusterDirOf(dataDir))!.pid
    await owner.stop()
    expect(alive(pid)).toBe(false)
  })

  it('backs resolvePoolConfig for the embedded connection source', async () => {
    const config = {
      connection: { source: 'embedded' },
      pool: {
        min: 0,
        max: 2,
        idleTimeoutMillis: 1000,
        maxLifetimeSeconds: 60,
        connectionTimeoutMillis: 5000,
        leakTimeMinutes: 15,
        statementTimeoutMillis: 0,
        lockTimeoutMillis: 0,
      },
      embedded: { dataDir, port: 0 },
    } as PgQueueConfig
    const logs: string[] = []
    const { poolConfig, embedded } = await resolvePoolConfig(config, (m) => logs.push(m))
    expect(embedded).toBeDefined()
    const pool = new pg.Pool(poolConfig)
    pool.on('error', () => {}) // the shutdown's 57P01 may reach a client that is still closing
    try {
      const { rows } = await pool.query<{ app: string }>("SELECT current_setting('application_name') AS app")
      expect(rows[0]!.app).toBe('kafkajs-pgqueue')
    } finally {
      await pool.end()
      await embedded!.stop()
    }
    const password = new URL(poolConfig.connectionString!).password
    expect(logs.join('\n')).not.toContain(password)
    expect(readPostmasterPid(clusterDirOf(dataDir))).toBeUndefined()
  })

  it.runIf(process.getuid?.() === 0)('explains, instead of crashing, when the postgres user cannot reach the data dir', async () => {
    const closed = mkdtempSync(path.join(tmpdir(), 'pgq-closed-')) // 0700, owned by root
    try {
      const inside = path.join(closed, 'data')
      mkdirSync(inside)
      chmodSync(closed, 0o700)
      await expect(ensureEmbeddedPostgres({ dataDir: inside })).rejects.toThrow(
        /postgres user .* cannot reach the data directory: .*pgq-closed-\w+ \(mode 700\) cannot be entered/,
      )
    } finally {
      rmSync(closed, { recursive: true, force: true })
    }
  })

  it('shared: the server outlives the process that started it until its last user stops', async () => {
    const started = deferred<{ reused: boolean }>()
    const stopped = deferred<void>()
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `require('./src/db/embedded.ts').ensureEmbeddedPostgres({ dataDir: process.env.PGQ_DIR, shared: true })
           .then((s) => {
             process.stdout.write(JSON.stringify({ reused: s.reused }) + '\\n')
             process.stdin.once('data', () => s.stop().then(() => process.stdout.write('stopped\\n')))
           })
           .catch((e) => { console.error(e); process.exit(1) })`,
      ],
      { cwd: REPO, env: { ...process.env, PGQ_DIR: dataDir }, stdio: ['pipe', 'pipe', 'inherit'] },
    )
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    void exited.then(() => {
      started.reject(new Error('child exited before the server was ready'))
      stopped.reject(new Error('child exited before stopping'))
    })
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'stopped') stopped.resolve()
      else started.resolve(JSON.parse(line))
    })
    expect((await started.promise).reused).toBe(false)
    const pid = readPostmasterPid(clusterDirOf(dataDir))!.pid

    const mine = await ensureEmbeddedPostgres({ dataDir, shared: true })
    expect(mine.reused).toBe(true)
    child.stdin!.end('go\n')
    await stopped.promise
    expect(await exited).toBe(0) // the starter exits normally (its exit hook must not take the server down)
    expect(await queryOnce(mine.connectionString)).toBe('pgqueue')

    await mine.stop() // the last user
    expect(alive(pid)).toBe(false)
  })
})
