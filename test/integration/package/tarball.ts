// Builds the package and packs it once into a directory, as `npm publish` would.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

export const root = path.resolve(__dirname, '../../..')

export interface Packed {
  tarball: string
  files: string[]
}

export function run(cmd: string, args: string[], cwd: string, timeout = 300_000) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, NODE_ENV: 'production' } })
  return {
    ok: r.status === 0,
    output: `$ ${cmd} ${args.join(' ')} (exit ${r.status})\n${r.stdout}\n${r.stderr}${r.error ? `\n${r.error.message}` : ''}`,
  }
}

export function packTarball(into: string): Packed {
  const build = run('npm', ['run', 'build'], root)
  if (!build.ok) throw new Error(build.output)
  const packDir = path.join(into, 'pack')
  fs.mkdirSync(packDir, { recursive: true })
  // already built above: skip the prepack build
  const pack = run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', packDir], root)
  if (!pack.ok) throw new Error(pack.output)
  const json = pack.output.slice(pack.output.indexOf('['), pack.output.lastIndexOf(']') + 1)
  const [info] = JSON.parse(json) as Array<{ filename: string; files: Array<{ path: string }> }>
  return { tarball: path.join(packDir, info!.filename), files: info!.files.map((f) => f.path) }
}
