import { spawn } from 'node:child_process'
import { afterAll, describe, expect, it } from 'vitest'
import { Kafka } from '../../../src/kafka.js'
import { logLevel } from '../../../src/kafkajs/exports.js'
import { useTestSchema, waitFor } from '../../helpers/db.js'

const db = useTestSchema('cli')
const children = new Set<ReturnType<typeof spawn>>()
afterAll(() => children.forEach((c) => c.kill('SIGKILL')))

interface Result {
  code: number | null
  stdout: string
  stderr: string
}

/** Environment without the variables that would point the CLI elsewhere than --url / --schema say. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env }
  for (const k of Object.keys(env)) if (k.startsWith('DATAHUB_') || k.startsWith('PG') || k === 'DATABASE_URL') delete env[k]
  return env
}

function start(args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env: cleanEnv(), stdio: 'pipe' })
  children.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const exited = new Promise<Result>((resolve) =>
    child.on('close', (code) => {
      children.delete(child)
      resolve({ code, stdout, stderr })
    }),
  )
  return { child, exited, stdout: () => stdout }
}

function cli(args: string[], input = ''): Promise<Result> {
  const run = start(args)
  run.child.stdin.end(input)
  return run.exited
}

const conn = ['--url', db.connectionString, '--schema', db.schema]

// Hang bounds, not timings: each CLI run is a fresh `node --import tsx` (under a second alone, 10-17 s each measured
// beside three other suites on a loaded 2-core machine, where 30 s per test timed out: docs/testing.md).
const ONE_RUN_MS = 60_000
const SEVERAL_RUNS_MS = 180_000

// no database and nothing shared: thirteen CLI processes side by side (vitest's maxConcurrency: 5 at a time)
describe.concurrent('usage', { timeout: ONE_RUN_MS }, () => {
  it.each([
    [['nonsense'], 'unknown command "nonsense"', 'Commands:'],
    [['topics'], 'topics needs a command', 'topics create'],
    [['topics', 'create'], 'missing <topic>', 'Usage: kafkajs-pgqueue topics create'],
    [['consume', 'orders'], '--group is required', 'Usage: kafkajs-pgqueue consume'],
    [['groups', 'lag', '--bogus'], "Unknown option '--bogus'", 'Usage: kafkajs-pgqueue groups lag'],
    [['produce', 't', '--partition', 'x'], '--partition must be an integer', 'Usage: kafkajs-pgqueue produce'],
    [['groups', 'reset-offsets', '--all-partitions'], '--all-partitions needs --group and --topic', 'Usage:'],
    [[], '', 'Usage: kafkajs-pgqueue <command>'],
  ])('%j exits 2 with the help text', async (args, message, help) => {
    const { code, stderr, stdout } = await cli(args)
    expect(code).toBe(2)
    expect(stderr).toContain(message)
    expect(stderr).toContain(help)
    expect(stdout).toBe('')
  })

  it.each([[['--help']], [['groups', '--help']], [['groups', 'reset-offsets', '--help']], [['serve', '-h']], [['produce', '--help', '--bogus']]])(
    '%j prints help and exits 0',
    async (args) => {
      const { code, stdout } = await cli(args)
      expect(code).toBe(0)
      expect(stdout).toMatch(/Usage: kafkajs-pgqueue/)
      if (args[0] === 'produce') expect(stdout).toContain('--key-separator <sep>')
    },
  )
})

describe('against a database', { timeout: SEVERAL_RUNS_MS }, () => {
  const topic = 'cli-orders'

  it('refuses to work on a schema that was never migrated, naming the fix (exit 1)', async () => {
    const { code, stderr } = await cli(['topics', 'list', ...conn])
    expect(code).toBe(1)
    expect(stderr).toContain('kafkajs-pgqueue migrate')
  })

  it('migrate creates the schema, then reports it up to date', async () => {
    const first = await cli(['migrate', ...conn])
    expect(first.code).toBe(0)
    expect(first.stdout).toContain('V001__schema.sql')
    const again = await cli(['migrate', '--json', ...conn])
    expect(again.code).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ schema: db.schema, applied: [] })
  })

  it('topics create / list --json', async () => {
    expect((await cli(['topics', 'create', topic, '--partitions', '1', ...conn])).code).toBe(0)
    const exists = await cli(['topics', 'create', topic, ...conn])
    expect(exists.code).toBe(1)
    expect((await cli(['topics', 'create', topic, '--if-not-exists', ...conn])).code).toBe(0)
    const { code, stdout } = await cli(['topics', 'list', '--json', ...conn])
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toEqual([expect.objectContaining({ name: topic, partitionCount: 1 })])
  })

  it('produce reads stdin; consume --max-messages prints and commits exactly that many', async () => {
    const produced = await cli(['produce', topic, '--key-separator', ':', '--header', 'src=cli', ...conn], 'k1:first\nk2:second\nk3:third\n')
    expect(produced.code).toBe(0)
    expect(produced.stderr).toContain('Produced 3 message(s)')

    const first = await cli(['consume', topic, '--group', 'cli-group', '--from-beginning', '--max-messages', '2', '--json', ...conn])
    expect(first.code).toBe(0)
    const lines = first.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines).toEqual([
      expect.objectContaining({ partition: 0, offset: 0, key: 'k1', value: 'first', headers: { src: 'cli' } }),
      expect.objectContaining({ partition: 0, offset: 1, key: 'k2', value: 'second' }),
    ])

    const lag = await cli(['groups', 'lag', '--json', '--group', 'cli-group', ...conn])
    expect(lag.code).toBe(0)
    expect(JSON.parse(lag.stdout)).toEqual([{ group: 'cli-group', topics: [{ topic, totalLag: 1, maxLag: 1, partitionCount: 1, stuckAhead: 0 }] }])

    const rest = await cli(['consume', topic, '--group', 'cli-group', '--max-messages', '1', '--print-key', ...conn])
    expect(rest.code).toBe(0)
    expect(rest.stdout).toBe('k3\tthird\n')
  })

  it('topics create failures name each failing topic and its reason (exit 1)', async () => {
    const { code, stderr } = await cli(['topics', 'create', 'bad name!', 'cli-bad-config', '--config', 'retention.ms=abc', ...conn])
    expect(code).toBe(1)
    expect(stderr).toContain('error: Topic creation errors\n')
    expect(stderr).toContain('  bad name!: INVALID_TOPIC_EXCEPTION: Invalid topic name "bad name!"')
    expect(stderr).toMatch(/ {2}cli-bad-config: INVALID_CONFIG: .*retention\.ms/)
  })

  it('produce to an unknown topic fails (exit 1) without creating it', async () => {
    const { code, stderr } = await cli(['produce', 'no-such-topic', ...conn], 'x\n')
    expect(code).toBe(1)
    expect(stderr).toContain('Unknown topic "no-such-topic"')
    expect(JSON.parse((await cli(['topics', 'list', '--json', ...conn])).stdout).map((t: { name: string }) => t.name)).toEqual([topic])
  })

  it('groups lag shows STUCK_AHEAD; reset-offsets is a dry run until --execute and needs a group or --all-groups', async () => {
    const offset = async (group: string) =>
      (await db.pool.query(`SELECT offset_value::int AS o FROM ${db.schema}.metadata_queue_consumer_offset WHERE consumer_group = $1`, [group]))
        .rows[0]?.o
    await db.pool.query(`UPDATE ${db.schema}.metadata_queue_consumer_offset SET offset_value = 42 WHERE consumer_group = 'cli-group'`)
    const lag = await cli(['groups', 'lag', '--detailed', '--group', 'cli-group', ...conn])
    expect(lag.code).toBe(0)
    expect(lag.stdout).toMatch(/cli-group\s+cli-orders\s+0\s+42\s+3\s+0\s+STUCK_AHEAD/)

    const bare = await cli(['groups', 'reset-offsets', ...conn])
    expect(bare.code).toBe(2)
    expect(bare.stderr).toContain('name a group with --group, or pass --all-groups')
    const cell = { group: 'cli-group', topic, partition: 0, previousOffset: 42, newOffset: 3, high: 3 }
    const dry = await cli(['groups', 'reset-offsets', '--all-groups', '--json', ...conn])
    expect(dry.code).toBe(0)
    expect(JSON.parse(dry.stdout)).toEqual({ partitionsUpdated: 1, resets: [cell], dryRun: true })
    expect(await offset('cli-group')).toBe(42)
    const text = await cli(['groups', 'reset-offsets', '--group', 'cli-group', ...conn])
    expect(text.stderr).toContain('Dry run: 1 offset(s) would be reset; run again with --execute to apply')
    expect(await offset('cli-group')).toBe(42)

    const reset = await cli(['groups', 'reset-offsets', '--group', 'cli-group', '--execute', '--json', ...conn])
    expect(reset.code).toBe(0)
    expect(JSON.parse(reset.stdout)).toEqual({ partitionsUpdated: 1, resets: [cell], dryRun: false })
    expect(await offset('cli-group')).toBe(3)
  })

  it('groups reset-offsets refuses a group that has live members, dry run or not (exit 1)', async () => {
    const kafka = new Kafka({ clientId: 'cli-test', logLevel: logLevel.NOTHING, pgqueue: db.options })
    const consumer = kafka.consumer({ groupId: 'cli-running', sessionTimeout: 6000, heartbeatInterval: 500, maxWaitTimeInMs: 200 })
    await consumer.connect()
    try {
      let seen = 0
      await consumer.subscribe({ topic, fromBeginning: true })
      await consumer.run({ eachMessage: async () => void seen++ })
      await waitFor(() => seen === 3, { timeout: 20_000 })
      await db.pool.query(`UPDATE ${db.schema}.metadata_queue_consumer_offset SET offset_value = 42 WHERE consumer_group = 'cli-running'`)
      for (const extra of [[], ['--execute']]) {
        const { code, stderr } = await cli(['groups', 'reset-offsets', '--all-groups', ...extra, ...conn])
        expect(code).toBe(1)
        expect(stderr).toMatch(/Refusing to reset offsets of running group\(s\) "cli-running" \(\w+, 1 live member\(s\)\)/)
      }
      const { rows } = await db.pool.query(
        `SELECT offset_value::int AS o FROM ${db.schema}.metadata_queue_consumer_offset WHERE consumer_group = 'cli-running'`,
      )
      expect(rows).toEqual([{ o: 42 }])
    } finally {
      await consumer.disconnect()
    }
  })

  it('serve answers /health until it is told to stop', async () => {
    const server = start(['serve', '--port', '0', ...conn])
    const started = Date.now()
    while (!/Serving on (\S+)/.test(server.stdout())) {
      if (Date.now() - started > 20_000) throw new Error('serve did not start')
      await new Promise((r) => setTimeout(r, 50))
    }
    const url = /Serving on (\S+)/.exec(server.stdout())![1]!
    const res = await fetch(`${url}/health`)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ status: 'UP', transport: 'pgqueue' })
    server.child.kill('SIGTERM')
    expect((await server.exited).code).toBe(0)
  })

  it('demo runs the example flow', async () => {
    const { code, stdout } = await cli(['demo', ...conn])
    expect(code).toBe(0)
    expect(stdout).toContain('demo: 9 of 9 messages consumed')
  })
})
