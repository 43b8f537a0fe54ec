// The package built and packed ONCE per state of the sources, for every test that installs the tarball (the package
// test, the instrumentation test, the contract suite's frameworks file on each transport). Each of them used to run
// `npm run build` itself: four builds of ~11 CPU-s in one `npm test`, and worse, side by side in the vitest and the
// compat stages, one build's `rm -rf dist` could empty the directory another was packing. Now the first caller builds
// under a lock (a directory, made atomically) and the others wait for its result in <tmp>/kafkajs-pgqueue-pack-*/<hash>/; the hash
// covers every file that goes into the build or the tarball, so an edit makes a new one.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export const root = path.resolve(__dirname, '../..')

export interface Packed {
  /** absolute path of the .tgz (shared: copy it before changing it) */
  tarball: string
  /** paths inside the tarball, as `npm pack --json` lists them */
  files: string[]
}

// what the build and the tarball are made of, and what the shared frameworks app is made of (its fixtures, its manifest)
const INPUTS = [
  'src',
  'migrations',
  'docs',
  'examples',
  'scripts',
  'package.json',
  'README.md',
  'LICENSE',
  'tsconfig.json',
  'tsconfig.build.json',
  'compat-tests/frameworks',
  'compat-tests/suite/frameworks.test.ts',
]
const WAIT_MS = 600_000

function sh(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', timeout: 300_000, env: { ...process.env, NODE_ENV: 'production' } })
  if (r.status !== 0)
    throw new Error(`$ ${cmd} ${args.join(' ')} (exit ${r.status})\n${r.stdout}\n${r.stderr}${r.error ? `\n${r.error.message}` : ''}`)
  return r.stdout
}

/** A hash of the files the build and the tarball are made of (tracked or not, but not ignored). */
function sourceHash(): string {
  const listed = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z', '--', ...INPUTS], { cwd: root, encoding: 'utf8' })
  const hash = createHash('sha256')
  if (listed.status !== 0) return `nogit-${process.pid}-${Date.now()}` // no git: no sharing beyond this process
  for (const file of listed.stdout.split('\0').filter(Boolean).sort()) {
    const full = path.join(root, file)
    if (!fs.existsSync(full)) continue // deleted but not yet staged
    hash.update(file).update('\0').update(fs.readFileSync(full)).update('\0')
  }
  return hash.digest('hex').slice(0, 16)
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function takeLock(lock: string): boolean {
  try {
    fs.mkdirSync(lock)
    return true
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw e
  }
}

function lockOwner(lock: string): number {
  try {
    return Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8')) || 0
  } catch {
    return 0 // not written yet, or the lock is already gone
  }
}

/**
 * What `produce` makes in its directory, made once per state of the sources by whichever caller comes first (under a
 * lock), the others waiting for it: synchronous like the spawns around it.
 */
export function oncePerSources<T>(name: string, produce: (dir: string) => T): T {
  // outside the repository: an app installed under it would resolve the repository's node_modules by walking up
  const base = path.join(os.tmpdir(), `kafkajs-pgqueue-pack-${createHash('sha256').update(root).digest('hex').slice(0, 8)}`)
  const hash = sourceHash()
  const states = path.join(base, hash)
  const dir = path.join(states, name)
  const result = `${dir}.json`
  const lock = `${dir}.lock`
  const deadline = Date.now() + WAIT_MS
  if (!fs.existsSync(states)) {
    fs.mkdirSync(states, { recursive: true })
    // older states' builds are of no use any more (one being made right now is left alone)
    for (const old of fs.readdirSync(base))
      if (old !== hash && !fs.readdirSync(path.join(base, old)).some((f) => f.endsWith('.lock')))
        fs.rmSync(path.join(base, old), { recursive: true, force: true })
  }
  for (;;) {
    if (fs.existsSync(result)) return JSON.parse(fs.readFileSync(result, 'utf8')) as T
    if (!takeLock(lock)) {
      // someone is making it: wait, unless it died (then its lock is taken over)
      const owner = lockOwner(lock)
      if (owner > 0 && !alive(owner)) fs.rmSync(lock, { recursive: true, force: true })
      if (Date.now() > deadline) throw new Error(`waited ${WAIT_MS} ms for ${lock} (pid ${owner || '?'})`)
      sleep(250)
      continue
    }
    try {
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid))
      fs.rmSync(dir, { recursive: true, force: true })
      fs.mkdirSync(dir, { recursive: true })
      const value = produce(dir)
      fs.writeFileSync(`${result}.tmp`, JSON.stringify(value))
      fs.renameSync(`${result}.tmp`, result)
      return value
    } finally {
      fs.rmSync(lock, { recursive: true, force: true })
    }
  }
}

/** Builds and packs the package, or waits for the caller that is doing it. */
export function packedTarball(): Packed {
  return oncePerSources('tarball', (dir) => {
    sh('npm', ['run', 'build'])
    // already built above: skip the prepack build
    const out = sh('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir])
    const [info] = JSON.parse(out.slice(out.indexOf('['), out.lastIndexOf(']') + 1)) as Array<{ filename: string; files: Array<{ path: string }> }>
    return { tarball: path.join(dir, info!.filename), files: info!.files.map((f) => f.path) }
  })
}
