// The published artefact, not the source tree: build, `npm pack`, install the tarball into fresh projects
// and load it both ways (require and import). Catches a missing ESM entry, files left out of "files",
// runtime imports of dev or optional dependencies, and a second copy of kafkajs beside the app's own.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { packTarball, run, type Packed } from './tarball.js'

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kafkajs-pgqueue-pack-'))
let packed: Packed

beforeAll(() => {
  packed = packTarball(tmp)
}, 600_000)

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true })
})

/** A fresh app with these packages installed (optional deps and install scripts left out: loading must not need them). */
function makeApp(name: string, packages: string[]): string {
  const app = path.join(tmp, name)
  fs.mkdirSync(app)
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: `pack-test-${name}`, private: true, version: '0.0.0' }))
  const install = run('npm', ['install', ...packages, '--no-audit', '--no-fund', '--prefer-offline', '--omit=optional', '--ignore-scripts'], app)
  expect(install.ok, install.output).toBe(true)
  return app
}

describe('npm package', () => {
  it('ships the build, migrations, docs and licence, and no sources or dangling source maps', () => {
    for (const required of ['dist/index.js', 'dist/index.mjs', 'dist/index.d.ts', 'dist/index.d.mts', 'package.json', 'LICENSE', 'README.md']) {
      expect(packed.files, `tarball lacks ${required}`).toContain(required)
    }
    expect(
      packed.files.some((p) => p.startsWith('migrations/')),
      'tarball lacks migrations/',
    ).toBe(true)
    expect(
      packed.files.some((p) => p.startsWith('docs/') && p.endsWith('.md')),
      'tarball lacks docs/',
    ).toBe(true)
    expect(
      packed.files.some((p) => p.startsWith('src/') || p.startsWith('test/')),
      'tarball ships sources/tests',
    ).toBe(false)
    // a map pointing at ../src, which is not shipped, only misleads debuggers
    expect(packed.files.filter((p) => p.endsWith('.map'))).toEqual([])
  })

  it('installs from the tarball and loads via require and import', { timeout: 600_000 }, () => {
    const app = makeApp('plain', [packed.tarball])
    const cjs = run(
      'node',
      [
        '-e',
        "const m = require('kafkajs-pgqueue'); if (typeof m.Kafka !== 'function' || m.logLevel.INFO !== 4 || typeof m.KafkaJSError !== 'function') { console.error(Object.keys(m)); process.exit(2) }",
      ],
      app,
    )
    expect(cjs.ok, cjs.output).toBe(true)

    // metrics, Avro and tracing load on first use, not with the package (scripts/measure-require.mjs for the time)
    const lazy = run(
      'node',
      [
        '-e',
        "require('kafkajs-pgqueue'); const loaded = Object.keys(require.cache).filter((k) => /node_modules[\\/](prom-client|avsc|@opentelemetry)[\\/]/.test(k)); if (loaded.length) { console.error(loaded); process.exit(2) }",
      ],
      app,
    )
    expect(lazy.ok, lazy.output).toBe(true)

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

  // kafkajs is a peer dependency: the app's copy is the only one, so our errors are the app's classes.
  // 2.2.0 is the oldest release with every class we re-export but one (KafkaJSNoBrokerAvailableError, 2.2.4).
  for (const version of ['2.2.0', '2.2.3', '2.2.4']) {
    it(`shares the app's kafkajs ${version}: one copy, and our errors are instanceof its classes`, { timeout: 600_000 }, () => {
      const app = makeApp(`kafkajs-${version}`, [`kafkajs@${version}`, packed.tarball])
      const copies = fs
        .readdirSync(path.join(app, 'node_modules', 'kafkajs-pgqueue'))
        .filter((name) => name === 'node_modules' && fs.existsSync(path.join(app, 'node_modules', 'kafkajs-pgqueue', name, 'kafkajs')))
      expect(copies, 'a nested kafkajs under kafkajs-pgqueue').toEqual([])
      const check = run(
        'node',
        [
          '-e',
          [
            "const k = require('kafkajs'); const m = require('kafkajs-pgqueue')",
            `if (require('kafkajs/package.json').version !== '${version}') process.exit(2)`,
            'if (m.KafkaJSError !== k.KafkaJSError || m.KafkaJSNonRetriableError !== k.KafkaJSNonRetriableError) process.exit(3)',
            // an error raised inside the package: a bad message is refused before any connection is made
            "const kafka = new m.Kafka({ clientId: 'c', brokers: [], pgqueue: { connection: { connectionString: 'postgres://nobody@127.0.0.1:1/none' } } })",
            "kafka.producer().send({ topic: 't', messages: [{ value: 'x', priority: 42 }] }).then(",
            '  () => process.exit(4),',
            '  (e) => { if (!(e instanceof k.KafkaJSError)) { console.error(e); process.exit(5) } console.log(e.name) })',
          ].join('\n'),
        ],
        app,
      )
      expect(check.ok, check.output).toBe(true)
      expect(check.output).toMatch(/KafkaJS\w+Error/)
    })
  }
})
