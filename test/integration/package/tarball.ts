// The packed package for the tests that install it, and a runner for the commands they run in the apps.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { packedTarball, type Packed } from '../../helpers/packedTarball.js'

export { root, type Packed } from '../../helpers/packedTarball.js'

export function run(cmd: string, args: string[], cwd: string, timeout = 300_000) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, NODE_ENV: 'production' } })
  return {
    ok: r.status === 0,
    output: `$ ${cmd} ${args.join(' ')} (exit ${r.status})\n${r.stdout}\n${r.stderr}${r.error ? `\n${r.error.message}` : ''}`,
  }
}

/** The package as `npm publish` would pack it (built once per run, test/helpers/packedTarball.ts), copied into `into`. */
export function packTarball(into: string): Packed {
  const shared = packedTarball()
  const packDir = path.join(into, 'pack')
  fs.mkdirSync(packDir, { recursive: true })
  const tarball = path.join(packDir, path.basename(shared.tarball))
  fs.copyFileSync(shared.tarball, tarball)
  return { tarball, files: shared.files }
}
