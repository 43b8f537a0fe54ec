// Code we do not own loads `kafkajs` by name: NestJS's Kafka transport, kafkajs-async-retry, any helper package.
// The packed tarball is installed into a fresh app next to those packages, and each program runs unmodified with
// `--require` / `--import kafkajs-pgqueue/register`: on the pgqueue backend every kafkajs in the process must be
// this package, on kafka the real one. The messages are then checked through the backend itself. The static alias
// recipes of docs/frameworks.md (npm, pnpm, yarn) are installed and run the same way (pgqueue only: an alias has
// no toggle).
import { execFile, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, inject } from 'vitest'
import { oncePerSources, packedTarball } from '../../test/helpers/packedTarball.js'
import { backendName, backendUnavailable, contract, fileSchema, uniqueName, type Scope } from '../harness.js'

const run = promisify(execFile)
const root = path.resolve(__dirname, '../..')
const fixtures = path.join(root, 'compat-tests', 'frameworks')
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kafkajs-pgqueue-frameworks-'))
/** The app with the frameworks installed: the same for both transports, so made once (installApp) */
let app = path.join(tmp, 'app')

/** The framework versions tried; exact, so a new release cannot change the test under us. */
const APP_DEPENDENCIES = {
  kafkajs: '2.2.4',
  '@nestjs/common': '12.5.1',
  '@nestjs/core': '12.5.1',
  '@nestjs/microservices': '12.1.1',
  'reflect-metadata': '0.2.2',
  rxjs: '7.8.2',
  'kafkajs-async-retry': '1.0.0',
  'kafka-helper-cjs': `file:${path.join(fixtures, 'indirect-cjs')}`,
  'kafka-helper-esm': `file:${path.join(fixtures, 'indirect-esm')}`,
}

function sh(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 300_000 })
  if (r.status !== 0) throw new Error(`$ ${cmd} ${args.join(' ')} (exit ${r.status})\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

let tarball = ''

/** The package as it would be published (built once per run and shared: test/helpers/packedTarball.ts), copied here. */
function packTarball(): void {
  const shared = packedTarball()
  tarball = path.join(tmp, path.basename(shared.tarball))
  fs.copyFileSync(shared.tarball, tarball)
}

/** A fresh app directory with the given manifest and the fixture programs. */
function makeApp(dir: string, manifest: Record<string, unknown>): void {
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'frameworks-app', private: true, ...manifest }, null, 2))
  for (const f of ['support.cjs', 'nest.mjs', 'async-retry.cjs', 'program.cjs', 'program.mjs']) {
    fs.copyFileSync(path.join(fixtures, f), path.join(dir, f))
  }
}

const NPM_INSTALL = ['install', '--no-audit', '--no-fund', '--prefer-offline', '--omit=optional', '--ignore-scripts']

/**
 * Install the package into a fresh app with the frameworks, as a user would: once per state of the sources, shared by
 * the Kafka and the PostgreSQL columns (the programs only read it; what differs is the environment they run in).
 */
function installApp(): void {
  app = oncePerSources('frameworks-app', (dir) => {
    makeApp(dir, { dependencies: { ...APP_DEPENDENCIES, 'kafkajs-pgqueue': `file:${packedTarball().tarball}` } })
    // --install-links copies the file: helper packages instead of linking back into this repository
    sh('npm', [...NPM_INSTALL, '--install-links'], dir)
    return dir
  })
}

/** The environment a deployment would set: the transport, and the broker or the database. */
function deploymentEnv(runId: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATAHUB_MESSAGING_TRANSPORT: backendName, FIXTURE_RUN_ID: runId }
  if (backendName === 'kafka') return { ...env, KAFKA_BROKERS: inject('kafkaBrokers').join(',') }
  return { ...env, DATABASE_URL: inject('pgUrl'), DATAHUB_PGQUEUE_SCHEMA: fileSchema(), DATAHUB_PGQUEUE_ENABLED: 'true' }
}

/** Runs a fixture with the register hook; returns its JSON line. */
async function runFixture(flag: '--require' | '--import' | null, file: string, runId: string, cwd = app): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, flag ? [flag, 'kafkajs-pgqueue/register', file] : [file], {
    cwd,
    env: deploymentEnv(runId),
    timeout: 120_000,
  })
  const last = stdout.trim().split('\n').pop()!
  return JSON.parse(last) as Record<string, unknown>
}

const expectedPackage = backendName === 'pgqueue' ? 'kafkajs-pgqueue' : 'kafkajs'

/** The backend itself holds the messages the fixture says it sent. */
async function expectMessagesIn(t: Scope, topics: string[]): Promise<void> {
  const admin = await t.admin()
  for (const topic of topics) {
    const offsets = await admin.fetchTopicOffsets(topic)
    expect(
      offsets.reduce((n, p) => n + Number(p.high), 0),
      `messages in ${topic}`,
    ).toBeGreaterThan(0)
  }
}

describe('frameworks that load kafkajs themselves, through kafkajs-pgqueue/register', () => {
  beforeAll(() => {
    if (backendUnavailable()) return
    packTarball()
    installApp()
  }, 600_000)
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

  contract(
    'a NestJS microservice: two ClientKafka replicas get their own replies; an event handler runs',
    async (t) => {
      const runId = uniqueName('nest')
      const sum = `${runId}.math.sum`
      const created = `${runId}.order.created`
      await t.createTopics([
        { topic: sum, numPartitions: 1 },
        { topic: `${sum}.reply`, numPartitions: 2 },
        { topic: created, numPartitions: 1 },
      ])
      const out = await runFixture('--import', 'nest.mjs', runId)
      // NestJS's Kafka serializer sends a number reply as its string form, on a real broker too
      expect(out).toEqual({ kafka: expectedPackage, replies: ['1', '2', '3', '101', '102', '103'], events: ['order-1'] })
      await expectMessagesIn(t, [sum, `${sum}.reply`, created])
    },
    { timeout: 150_000 },
  )

  contract(
    'kafkajs-async-retry as its README uses it: a failed attempt goes to the retry topic and succeeds there',
    async (t) => {
      const runId = uniqueName('retry')
      const out = await runFixture('--require', 'async-retry.cjs', runId)
      expect(out.kafka).toBe(expectedPackage)
      expect(out.attempts).toEqual([
        { value: 'order-1', previousAttempts: 0, originalTopic: `${runId}-orders` },
        { value: 'order-1', previousAttempts: 1, originalTopic: `${runId}-orders` },
      ])
      await expectMessagesIn(t, [`${runId}-orders`, `${runId}-retry-group-retry-1`])
    },
    { timeout: 150_000 },
  )

  for (const [kind, flag, file] of [
    ['a CommonJS program that gets kafkajs through a CommonJS dependency', '--require', 'program.cjs'],
    ['an ESM program that gets kafkajs through an ESM dependency', '--import', 'program.mjs'],
  ] as const) {
    contract(
      kind,
      async (t) => {
        const runId = uniqueName('indirect')
        expect(await runFixture(flag, file, runId)).toEqual({ kafka: expectedPackage, received: ['hello'] })
        await expectMessagesIn(t, [`${runId}-indirect`])
      },
      { timeout: 150_000 },
    )
  }

  contract('without the hook nothing changes, and an unknown transport fails loudly', async () => {
    const probe = "console.log(typeof require('kafka-helper-cjs').Kafka === typeof require('kafkajs').Kafka, typeof require('kafkajs').createKafka)"
    const { stdout } = await run(process.execPath, ['-e', probe], { cwd: app, env: { ...process.env, DATAHUB_MESSAGING_TRANSPORT: 'pgqueue' } })
    expect(stdout.trim()).toBe('true undefined')
    const bad = spawnSync(process.execPath, ['--require', 'kafkajs-pgqueue/register', '-e', '0'], {
      cwd: app,
      encoding: 'utf8',
      env: { ...process.env, DATAHUB_MESSAGING_TRANSPORT: 'pgqeue' },
    })
    expect(bad.status).not.toBe(0)
    expect(bad.stderr).toContain('Invalid DATAHUB_MESSAGING_TRANSPORT: "pgqeue"')
  })

  // docs/frameworks.md: `kafkajs` aliased to this package for every dependency, the real kafkajs beside it as
  // kafkajs-upstream (this package's own base). The same app and program, no hook.
  const ALIAS = { kafkajs: '', 'kafkajs-upstream': 'npm:kafkajs@2.2.4', 'kafkajs-async-retry': '1.0.0' }
  const RECIPES: Record<string, { manifest: (spec: string) => Record<string, unknown>; install: [string, string[]] }> = {
    npm: {
      manifest: (spec) => ({ dependencies: { ...ALIAS, kafkajs: spec }, overrides: { kafkajs: '$kafkajs' } }),
      install: ['npm', NPM_INSTALL],
    },
    pnpm: {
      manifest: (spec) => ({ dependencies: { ...ALIAS, kafkajs: spec }, pnpm: { overrides: { kafkajs: '$kafkajs' } } }),
      install: ['npx', ['-y', 'pnpm@10.34.9', 'install', '--config.optional=false', '--ignore-scripts']],
    },
    yarn: {
      manifest: (spec) => ({ dependencies: { ...ALIAS, kafkajs: spec }, resolutions: { kafkajs: spec } }),
      // a cache of its own: yarn 1 caches a file: tarball by name and version, so a shared cache would install the
      // tarball of an earlier run of this same version (older migrations) instead of the one just packed
      install: [
        'npx',
        [
          '-y',
          'yarn@1.22.22',
          'install',
          '--ignore-optional',
          '--ignore-scripts',
          '--non-interactive',
          '--cache-folder',
          path.join(tmp, 'yarn-cache'),
        ],
      ],
    },
  }
  // three installs of their own (npm, pnpm, yarn; separate caches): side by side, as they mostly wait on the network
  // and the disk
  describe.concurrent('static aliases', () => {
    for (const [manager, recipe] of Object.entries(RECIPES)) {
      contract(
        `static alias with ${manager}: a dependency's require('kafkajs') gets this package`,
        async (t, ctx) => {
          if (backendName !== 'pgqueue') {
            ctx.task.meta.pending = 'a static alias always runs on PostgreSQL: no kafka column'
            ctx.skip(ctx.task.meta.pending)
          }
          const dir = path.join(tmp, `alias-${manager}`)
          makeApp(dir, recipe.manifest(`file:${tarball}`))
          await run(recipe.install[0], recipe.install[1], { cwd: dir, timeout: 300_000 })
          const runId = uniqueName(`alias_${manager}`)
          const out = await runFixture(null, 'async-retry.cjs', runId, dir)
          expect(out.kafka).toBe('kafkajs-pgqueue')
          expect(out.attempts).toHaveLength(2)
          await expectMessagesIn(t, [`${runId}-orders`])
        },
        { timeout: 240_000 },
      )
    }
  })
})
