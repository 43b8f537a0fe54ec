// The embedded PostgreSQL must not change how the host process exits: the same exit codes as with a URL,
// the app's own SIGTERM handler runs to the end (KafkaJS's graceful-shutdown pattern commits what it
// handled), process.exitCode is kept, a failing node:test file fails. Every embedded case starts the
// server in the child itself (nothing else holds it), which is where the old exit hook was installed.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureEmbeddedPostgres } from '../../../src/db/embedded.js'
import { stopEmbeddedPostgres } from '../../../src/db/embedded/postmaster.js'
import { Kafka } from '../../../src/kafka.js'
import { logLevel } from '../../../src/kafkajs/exports.js'
import { useTestSchema, waitFor } from '../../helpers/db.js'

const REPO = path.resolve(__dirname, '../../..')
const db = useTestSchema('exit')
const dataDir = mkdtempSync(path.join(tmpdir(), 'pgq-exit-'))
const children = new Set<ChildProcess>()

afterAll(async () => {
  children.forEach((c) => c.kill('SIGKILL'))
  await stopEmbeddedPostgres(dataDir).catch(() => {})
  rmSync(dataDir, { recursive: true, force: true })
})

type Mode = 'embedded' | 'url'
const MODES: Mode[] = ['embedded', 'url']

/** No variable that would point the child elsewhere; embedded mode gets its own data dir. */
function envFor(mode: Mode, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env }
  for (const k of Object.keys(env)) if (k.startsWith('DATAHUB_') || k.startsWith('PG') || k === 'DATABASE_URL') delete env[k]
  if (mode === 'embedded') env.DATAHUB_PGQUEUE_EMBEDDED_DATA_DIR = dataDir
  else Object.assign(env, { PG_URL: db.connectionString, PG_SCHEMA: db.schema })
  return { ...env, ...extra }
}

interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

function start(args: string[], env: NodeJS.ProcessEnv, input = '') {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: REPO, env, stdio: 'pipe' })
  children.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  child.stdin.end(input)
  const exited = new Promise<Exit>((resolve) =>
    child.once('close', (code, signal) => {
      children.delete(child)
      resolve({ code, signal, stdout, stderr })
    }),
  )
  return { child, exited, lines: createInterface({ input: child.stdout }) }
}

const cli = (mode: Mode, args: string[], input = '') =>
  start(['src/cli/main.ts', ...args, ...(mode === 'url' ? ['--url', db.connectionString, '--schema', db.schema] : [])], envFor(mode), input).exited

// the URL runs need the schema in place (the CLI migrates only its own embedded database)
beforeAll(async () => {
  const migrated = await cli('url', ['migrate'])
  expect(migrated.code, migrated.stderr).toBe(0)
}, 60_000)

describe('CLI exit codes', () => {
  // twelve CLI processes, six of them starting the embedded server: 22 s on a quiet machine, 219 s measured at a load
  // average of 50-90 (docs/testing.md); the bound is for a hang
  it('are the same on the embedded database as with --url', { timeout: 480_000 }, async () => {
    const cases: Array<[string[], string]> = [
      [['topics', 'create', 'exit-orders'], ''],
      [['topics', 'create', 'exit-orders'], ''], // exists
      [['topics', 'describe', 'nope'], ''],
      [['produce', 'nope'], 'x\n'],
      [['consume', 'nope', '-g', 'g'], ''],
      [['groups', 'describe', 'nope'], ''],
    ]
    const codes: Record<Mode, Array<number | null>> = { embedded: [], url: [] }
    // the two modes side by side (separate databases), the cases of each in order ('exists' follows its create)
    await Promise.all(
      MODES.map(async (mode) => {
        for (const [args, input] of cases) codes[mode].push((await cli(mode, args, input)).code)
      }),
    )
    expect(codes.url[0]).toBe(0)
    expect(
      codes.url.slice(1, 5).every((c) => c !== 0 && c !== null),
      `url codes ${codes.url}`,
    ).toBe(true)
    expect(codes.embedded).toEqual(codes.url)
  })
})

/** Kafka on the database `mode` uses; for embedded, a second user of the server the child started. */
async function attach(mode: Mode): Promise<{ kafka: Kafka; detach: () => Promise<void> }> {
  if (mode === 'url') return { kafka: new Kafka({ logLevel: logLevel.NOTHING, pgqueue: db.options }), detach: async () => {} }
  const server = await ensureEmbeddedPostgres({ dataDir, shared: true })
  return { kafka: new Kafka({ logLevel: logLevel.NOTHING, pgqueue: { connectionString: server.connectionString } }), detach: server.stop }
}

describe.each(MODES)('on %s: a SIGTERM handler awaiting consumer.disconnect()', (mode) => {
  it.each(['rekill', 'exitcode'])('runs to the end and commits every handled message (%s)', { timeout: 120_000 }, async (onSigterm) => {
    const topic = `exit-sigterm-${onSigterm}`
    const groupId = `g-${onSigterm}`
    // create the topic from a CLI run, so that the consumer below starts the embedded server afresh
    expect((await cli(mode, ['topics', 'create', topic, '--partitions', '2'])).code).toBe(0)

    const consumer = start(['test/fixtures/shutdownConsumer.ts'], envFor(mode, { TOPIC: topic, GROUP: groupId, ON_SIGTERM: onSigterm }))
    const handled = new Map<number, number>()
    let ready = false
    consumer.lines.on('line', (line) => {
      const [kind, partition, offset] = line.split(' ')
      if (kind === 'ready') ready = true
      if (kind === 'h') handled.set(Number(partition), Math.max(handled.get(Number(partition)) ?? -1, Number(offset)))
    })
    await waitFor(() => ready, { timeout: 60_000 })

    const { kafka, detach } = await attach(mode)
    try {
      const producer = kafka.producer()
      await producer.connect()
      await producer.send({ topic, messages: Array.from({ length: 400 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) })
      await producer.disconnect()
      await waitFor(() => [...handled.values()].reduce((n, o) => n + o + 1, 0) >= 50, { timeout: 60_000 })

      consumer.child.kill('SIGTERM')
      const exit = await consumer.exited
      expect(exit.stdout, exit.stderr).toContain('disconnected')
      if (onSigterm === 'exitcode') expect(exit.code).toBe(3)
      else expect(exit.signal).toBe('SIGTERM')

      const admin = kafka.admin()
      await admin.connect()
      const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] })
      await admin.disconnect()
      const committed = new Map(offsets!.partitions.map((p) => [p.partition, Number(p.offset)]))
      for (const [partition, last] of handled) expect(committed.get(partition), `partition ${partition}`).toBe(last + 1)
    } finally {
      await detach()
    }
  })
})

describe.each(MODES)('on %s: CLI consume stopped by SIGTERM', (mode) => {
  it('prints its summary and exits 0', { timeout: 90_000 }, async () => {
    const topic = 'exit-cli-consume'
    expect((await cli(mode, ['topics', 'create', topic])).code).toBe(0)
    const url = mode === 'url' ? ['--url', db.connectionString, '--schema', db.schema] : []
    const run = start(['src/cli/main.ts', 'consume', topic, '-g', 'g-cli', ...url], envFor(mode))
    const { kafka, detach } = await attach(mode)
    const admin = kafka.admin()
    await admin.connect()
    try {
      // a member in the group: the command has installed its signal handlers (before connecting)
      await waitFor(async () => (await admin.describeGroups(['g-cli'])).groups[0]?.members.length, { timeout: 60_000 })
      run.child.kill('SIGTERM')
      const exit = await run.exited
      expect(exit.stderr).toContain('Consumed 0 message(s)')
      expect(exit.code).toBe(0)
    } finally {
      await admin.disconnect()
      await detach()
    }
  })
})

describe.each(MODES)('on %s: the process exit code', (mode) => {
  it('keeps process.exitCode', { timeout: 60_000 }, async () => {
    const exit = await start(['test/fixtures/exitCodeApp.ts'], envFor(mode)).exited
    expect(exit.code, exit.stderr).toBe(3)
  })

  it('is non-zero for a node:test file with a failing assertion', { timeout: 60_000 }, async () => {
    const exit = await start(['test/fixtures/failingNodeTest.ts'], envFor(mode)).exited
    expect(exit.stdout).toMatch(/not ok 1 - a failing assertion/)
    expect(exit.code).toBe(1)
  })
})
