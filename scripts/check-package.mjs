#!/usr/bin/env node
// Package hygiene on the packed tarball, as an app would get it from npm:
//   1. @arethetypeswrong/cli and publint report nothing (warnings and suggestions included);
//   2. a fresh consumer project that installs only the tarball (kafkajs comes as its peer) and @types/node
//      type-checks with skipLibCheck: false under node16, nodenext and bundler resolution, from ESM and CJS.
// Usage: npm run check:package   (builds first through prepack; exits non-zero on any finding)
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const bin = (name) => path.join(root, 'node_modules', '.bin', name)
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kafkajs-pgqueue-check-'))
let failures = 0

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' })
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? r.error.message : ''}` }
}

function step(name, { ok, out }, extraCheck = () => true) {
  const pass = ok && extraCheck(out)
  console.log(`${pass ? 'ok  ' : 'FAIL'} ${name}`)
  if (!pass) {
    failures++
    console.log(out.trim().replace(/^/gm, '     '))
  }
}

try {
  const pack = run('npm', ['pack', '--json', '--pack-destination', tmp], root)
  if (!pack.ok) throw new Error(pack.out)
  const json = pack.out.slice(pack.out.indexOf('[\n'), pack.out.lastIndexOf(']') + 1)
  const tarball = path.join(tmp, JSON.parse(json)[0].filename)

  step('attw: no problems', run(bin('attw'), [tarball, '--format', 'ascii'], root), (out) => /No problems found/.test(out))
  // publint exits 0 on suggestions and warnings; any of them counts here
  step('publint: nothing to report', run(bin('publint'), [tarball], root), (out) => !/Suggestions|Warnings|Errors/.test(out))

  const app = path.join(tmp, 'consumer')
  fs.cpSync(path.join(root, 'scripts', 'consumer-types'), app, { recursive: true })
  const typesNode = JSON.parse(fs.readFileSync(path.join(root, 'node_modules', '@types', 'node', 'package.json'), 'utf8')).version
  const install = run('npm', ['install', tarball, `@types/node@${typesNode}`, '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', '--omit=optional'], app)
  if (!install.ok) throw new Error(install.out)
  for (const config of ['tsconfig.node16.json', 'tsconfig.nodenext.json', 'tsconfig.bundler.json']) {
    step(`tsc -p ${config} (skipLibCheck: false)`, run(bin('tsc'), ['-p', config], app))
  }
} catch (err) {
  failures++
  console.log(`FAIL ${err instanceof Error ? err.message : err}`)
} finally {
  fs.rmSync(tmp, { recursive: true, force: true })
}
console.log(failures === 0 ? 'check-package: clean' : `check-package: ${failures} finding(s)`)
process.exit(failures === 0 ? 0 : 1)
