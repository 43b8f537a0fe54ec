#!/usr/bin/env node
// Package hygiene on the packed tarball, as an app would get it from npm:
//   1. @arethetypeswrong/cli and publint report nothing (warnings and suggestions included);
//   2. a fresh consumer project that installs only the tarball (kafkajs comes as its peer) and @types/node
//      type-checks with skipLibCheck: false under node16, nodenext and bundler resolution, from ESM and CJS;
//   3. every relative link of the README names a file the tarball ships (npm shows the README without the repo);
//   4. the examples, copied into that project as they are, type-check against the tarball, and quickstart.ts runs
//      there (on DATABASE_URL; skipped without one, since the project leaves the embedded binaries out).
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
const devVersion = (name) => JSON.parse(fs.readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version

function run(cmd, args, cwd, env = process.env) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8' })
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
  const [info] = JSON.parse(json)
  const tarball = path.join(tmp, info.filename)
  const shipped = info.files.map((f) => f.path)

  step('attw: no problems', run(bin('attw'), [tarball, '--format', 'ascii'], root), (out) => /No problems found/.test(out))
  // publint exits 0 on suggestions and warnings; any of them counts here
  step('publint: nothing to report', run(bin('publint'), [tarball], root), (out) => !/Suggestions|Warnings|Errors/.test(out))

  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  const links = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]).filter((l) => !/^[a-z]+:/i.test(l))
  const dead = links.filter((l) => !shipped.some((f) => f === l || f.startsWith(l.endsWith('/') ? l : `${l}/`)))
  step(`README: ${links.length} relative links, each to a file in the tarball`, {
    ok: dead.length === 0,
    out: `not in the tarball: ${dead.join(', ')}`,
  })

  const app = path.join(tmp, 'consumer')
  fs.cpSync(path.join(root, 'scripts', 'consumer-types'), app, { recursive: true })
  const registryClient = `@kafkajs/confluent-schema-registry@${devVersion('@kafkajs/confluent-schema-registry')}` // examples/avro.ts
  const install = run(
    'npm',
    [
      'install',
      tarball,
      `@types/node@${devVersion('@types/node')}`,
      registryClient,
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--ignore-scripts',
      '--omit=optional',
    ],
    app,
  )
  if (!install.ok) throw new Error(install.out)
  for (const config of ['tsconfig.node16.json', 'tsconfig.nodenext.json', 'tsconfig.bundler.json']) {
    step(`tsc -p ${config} (skipLibCheck: false)`, run(bin('tsc'), ['-p', config], app))
  }
  // what a user gets by copying an example: it may import only the package, Node and the registry client
  fs.cpSync(path.join(app, 'node_modules', 'kafkajs-pgqueue', 'examples'), path.join(app, 'examples'), { recursive: true })
  step('examples type-check against the tarball (skipLibCheck: false)', run(bin('tsc'), ['-p', 'tsconfig.examples.json'], app))
  if (process.env.DATABASE_URL) {
    // a schema of its own on the shared database (the example's topic and group names are unique per run)
    const env = {
      ...process.env,
      DATAHUB_MESSAGING_TRANSPORT: 'pgqueue',
      DATAHUB_PGQUEUE_SCHEMA: 'check_package',
      KAFKAJS_NO_PARTITIONER_WARNING: '1',
    }
    step(
      'examples/quickstart.ts runs from the tarball',
      run(process.execPath, [path.join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'examples/quickstart.ts'], app, env),
    )
  } else console.log('skip examples/quickstart.ts from the tarball (no DATABASE_URL)')
} catch (err) {
  failures++
  console.log(`FAIL ${err instanceof Error ? err.message : err}`)
} finally {
  fs.rmSync(tmp, { recursive: true, force: true })
}
console.log(failures === 0 ? 'check-package: clean' : `check-package: ${failures} finding(s)`)
process.exit(failures === 0 ? 0 : 1)
