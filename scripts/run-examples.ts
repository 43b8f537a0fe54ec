// `npm run examples`: runs every examples/*.ts as its own process, on PostgreSQL and — for the transport-neutral
// ones — on a Kafka broker, and prints a table example × transport with pass/fail and durations.
//
//   npm run examples                                   # pgqueue (embedded, or DATABASE_URL / PG*) + kafka
//   npm run examples -- --pg embedded --pg postgres://postgres@127.0.0.1:5432/test   # one column per database
//   npm run examples -- --transport pgqueue --only quickstart,outbox --verbose
//
// An example declares where it runs in a comment line `// transports: pgqueue kafka` (default: pgqueue):
//   pgqueue  DATAHUB_MESSAGING_TRANSPORT=pgqueue, on each --pg database
//   kafka    DATAHUB_MESSAGING_TRANSPORT=kafka and KAFKA_BROKERS=<broker>
//   kafkajs  on the broker too, with the file's `from 'kafkajs-pgqueue'` import put back to `from 'kafkajs'`
//            (the program as it was before the one-line switch)
// The broker is KAFKA_BROKERS when set, else one started by compat-tests/broker (container or local jars);
// without one the Kafka column is skipped, or fails with COMPAT_REQUIRE_KAFKA=1.
// Every example must exit 0 on success within --timeout (default 60 s); over 20 s is marked slow.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { ensureEmbeddedPostgres } from '../src/db/embedded.js'
import { Kafka } from '../src/index.js'
import { findBroker, type RunningBroker } from '../compat-tests/broker/index.js'

const root = path.resolve(__dirname, '..')
const examplesDir = path.join(root, 'examples')
const scratch = path.join(root, '.cache', 'examples')
const tsxCli = require.resolve('tsx/cli')

/** Preferred order; examples not listed run after these, alphabetically. */
const ORDER = [
  'demo',
  'quickstart',
  'transport-toggle',
  'swap-import',
  'each-batch',
  'exactly-once',
  'outbox',
  'priorities',
  'datahub-fanout',
  'avro',
  'ops-server',
  'dead-letter',
  'compacted-state',
]
const SLOW_MS = 20_000
const PG_VARIABLES = ['DATABASE_URL', 'DATAHUB_PGQUEUE_DATASOURCE_URL', 'PGHOST', 'PGPORT', 'PGUSER', 'PGDATABASE', 'PGPASSWORD', 'PGSERVICE']

type Mode = 'pgqueue' | 'kafka' | 'kafkajs'
interface Example {
  name: string
  file: string
  modes: Set<Mode>
}
interface Column {
  label: string
  transport: 'pgqueue' | 'kafka'
  /** pgqueue: 'embedded' or a connection string; undefined = whatever the environment says */
  database?: string
}
interface Cell {
  state: 'pass' | 'fail' | 'skip' | 'n/a'
  ms?: number
  note?: string
}

interface Options {
  only?: string[]
  transports: Set<'pgqueue' | 'kafka'>
  databases: string[]
  verbose: boolean
  timeoutMs: number
}

function parseArgs(argv: string[]): Options {
  const o: Options = { transports: new Set(), databases: [], verbose: false, timeoutMs: Number(process.env.EXAMPLES_TIMEOUT_MS ?? 60_000) }
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2)
    const value = () => inline ?? argv[++i] ?? usage(`${flag} needs a value`)
    if (flag === '--only')
      o.only = value()
        .split(',')
        .map((s) => s.trim().replace(/\.ts$/, ''))
        .filter(Boolean)
    else if (flag === '--transport') {
      const t = value()
      if (t !== 'pgqueue' && t !== 'kafka') usage(`unknown transport ${t}`)
      o.transports.add(t as 'pgqueue' | 'kafka')
    } else if (flag === '--pg') o.databases.push(value())
    else if (flag === '--timeout') o.timeoutMs = Number(value())
    else if (flag === '--verbose' || flag === '-v') o.verbose = true
    else usage(`unknown argument ${argv[i]}`)
  }
  if (o.transports.size === 0) o.transports = new Set(['pgqueue', 'kafka'])
  if (!(o.timeoutMs > 0)) usage('--timeout must be a positive number of milliseconds')
  return o
}

function usage(problem: string): never {
  console.error(
    `${problem}\nusage: run-examples [--only a,b] [--transport pgqueue|kafka]... [--pg embedded|<postgres url>]... [--timeout ms] [--verbose]`,
  )
  process.exit(2)
}

function discover(only?: string[]): Example[] {
  const names = fs
    .readdirSync(examplesDir)
    .filter((f) => f.endsWith('.ts') && !f.startsWith('_') && !f.startsWith('.') && !f.endsWith('.d.ts'))
    .map((f) => f.slice(0, -3))
  const rank = (n: string) => (ORDER.includes(n) ? ORDER.indexOf(n) : ORDER.length)
  names.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
  if (only) {
    const unknown = only.filter((n) => !names.includes(n))
    if (unknown.length) usage(`no such example: ${unknown.join(', ')} (have ${names.join(', ')})`)
  }
  return names
    .filter((n) => !only || only.includes(n))
    .map((name) => {
      const file = path.join(examplesDir, `${name}.ts`)
      const marker = /^\/\/\s*transports:(.*)$/m.exec(fs.readFileSync(file, 'utf8'))
      const modes = new Set((marker?.[1] ?? 'pgqueue').split(/[\s,]+/).filter(Boolean) as Mode[])
      for (const m of modes)
        if (!['pgqueue', 'kafka', 'kafkajs'].includes(m)) throw new Error(`${name}.ts: unknown transport "${m}" in its transports: line`)
      return { name, file, modes }
    })
}

function redact(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return url
  }
}

function pgColumns(o: Options): Column[] {
  if (o.databases.length > 0) {
    return o.databases.map((d) => ({ label: d === 'embedded' ? 'pgqueue (embedded)' : `pgqueue (${redact(d)})`, transport: 'pgqueue', database: d }))
  }
  const configured = PG_VARIABLES.find((v) => v !== 'PGPASSWORD' && process.env[v])
  const label = !configured ? 'embedded' : configured.endsWith('URL') ? redact(process.env[configured]!) : `${configured} environment`
  return [{ label: `pgqueue (${label})`, transport: 'pgqueue', database: configured ? undefined : 'embedded' }]
}

/** The program before the switch: the library import put back to 'kafkajs', in a git-ignored scratch file. */
function asKafkaJS(example: Example): string {
  const source = fs.readFileSync(example.file, 'utf8')
  const ours = /^(import\b[^\n]*) from 'kafkajs-pgqueue'/gm
  const count = source.match(ours)?.length ?? 0
  if (count !== 1) throw new Error(`${example.name}.ts: 'kafkajs' mode needs exactly one import from 'kafkajs-pgqueue', found ${count}`)
  const rewritten = source.replace(ours, "$1 from 'kafkajs'")
  if (/from '\.\.?\//.test(rewritten)) throw new Error(`${example.name}.ts: 'kafkajs' mode allows no other relative imports`)
  const file = path.join(scratch, `${example.name}.kafkajs.ts`)
  fs.writeFileSync(file, `// generated by scripts/run-examples.ts from examples/${example.name}.ts\n${rewritten}`)
  return file
}

function childEnv(column: Column, brokers: string[] | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, KAFKAJS_NO_PARTITIONER_WARNING: '1' }
  if (column.transport === 'kafka') {
    env.DATAHUB_MESSAGING_TRANSPORT = 'kafka'
    env.KAFKA_BROKERS = brokers!.join(',')
    return env
  }
  env.DATAHUB_MESSAGING_TRANSPORT = 'pgqueue'
  env.DATAHUB_PGQUEUE_ENABLED ??= 'true' // programs without pgqueue options (swap-import) create the tables too
  if (column.database === 'embedded') for (const v of PG_VARIABLES) delete env[v]
  else if (column.database) {
    for (const v of PG_VARIABLES) delete env[v]
    env.DATABASE_URL = column.database
  }
  return env
}

let current: { pid: number } | undefined

/**
 * The harness keeps one local broker per checkout (compat-tests/.kafka/run) and SIGKILLs the one in its pid file
 * before starting: starting ours while `npm run test:compat` runs would kill that run's broker. Wait for it instead.
 */
async function waitForOtherLocalBroker(): Promise<void> {
  if (process.env.KAFKA_BROKERS?.trim()) return
  const pidFile = path.join(root, 'compat-tests', '.kafka', 'run', 'kafka.pid')
  const alive = () => {
    try {
      const pid = Number(fs.readFileSync(pidFile, 'utf8'))
      return Number.isInteger(pid) && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('kafka.Kafka') ? pid : undefined
    } catch {
      return undefined
    }
  }
  const waitMs = Number(process.env.EXAMPLES_BROKER_WAIT_MS ?? 600_000)
  const deadline = Date.now() + waitMs
  let pid = alive()
  if (pid !== undefined)
    console.log(`[broker] another run's local broker (pid ${pid}) is up; waiting up to ${waitMs / 1000} s for it to stop (or set KAFKA_BROKERS)`)
  while (pid !== undefined) {
    if (Date.now() > deadline)
      throw new Error(`another run's local broker (pid ${pid}) is still up after ${waitMs} ms; set KAFKA_BROKERS to use a broker of your own`)
    await new Promise((r) => setTimeout(r, 2_000))
    pid = alive()
  }
}

async function runOne(name: string, file: string, column: Column, env: NodeJS.ProcessEnv, o: Options): Promise<Cell> {
  const logFile = path.join(scratch, 'logs', `${name}.${column.label.replace(/[^a-z0-9]+/gi, '_').replace(/_+$/, '')}.log`)
  const log = fs.createWriteStream(logFile)
  const started = Date.now()
  return new Promise<Cell>((resolve) => {
    const child = spawn(process.execPath, [tsxCli, file], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    current = { pid: child.pid! }
    const tail: string[] = []
    const collect = (chunk: Buffer) => {
      log.write(chunk)
      if (o.verbose) process.stdout.write(chunk.toString().replace(/^(?=.)/gm, `  │ `))
      tail.push(...chunk.toString().split('\n'))
      tail.splice(0, Math.max(0, tail.length - 40))
    }
    child.stdout.on('data', collect)
    child.stderr.on('data', collect)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // already gone
      }
    }, o.timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      current = undefined
      log.end()
      const ms = Date.now() - started
      if (code === 0 && !timedOut) return resolve({ state: 'pass', ms, note: ms > SLOW_MS ? 'slow' : undefined })
      const why = timedOut ? `timeout after ${o.timeoutMs} ms` : `exit ${signal ?? code}`
      if (!o.verbose) {
        console.log(`  ✗ ${name} on ${column.label}: ${why}; last lines (full log ${path.relative(root, logFile)}):`)
        for (const line of tail.join('\n').trimEnd().split('\n').slice(-25)) console.log(`    ${line}`)
      }
      resolve({ state: 'fail', ms, note: timedOut ? 'timeout' : undefined })
    })
  })
}

function printTable(examples: Example[], columns: Column[], cells: Map<string, Cell>): void {
  const text = (c: Cell | undefined) => {
    if (!c || c.state === 'n/a') return '–'
    if (c.state === 'skip') return `skip${c.note ? ` (${c.note})` : ''}`
    const secs = c.ms === undefined ? '' : ` ${(c.ms / 1000).toFixed(1)}s`
    return `${c.state === 'pass' ? 'pass' : 'FAIL'}${secs}${c.note ? ` (${c.note})` : ''}`
  }
  const header = ['example', ...columns.map((c) => c.label)]
  const rows = examples.map((e) => [e.name, ...columns.map((c) => text(cells.get(`${e.name}|${c.label}`)))])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (r: string[]) => `| ${r.map((s, i) => s.padEnd(widths[i])).join(' | ')} |`
  console.log(['', line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n'))
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2))
  fs.mkdirSync(path.join(scratch, 'logs'), { recursive: true })
  const examples = discover(o.only)
  const columns: Column[] = []
  if (o.transports.has('pgqueue')) columns.push(...pgColumns(o))
  const wantsKafka = o.transports.has('kafka') && examples.some((e) => e.modes.has('kafka') || e.modes.has('kafkajs'))
  if (wantsKafka) columns.push({ label: 'kafka', transport: 'kafka' })

  const cleanups: Array<() => Promise<void>> = []
  const cleanup = async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch((e) => console.error(`cleanup: ${(e as Error).message}`))
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      if (current) {
        try {
          process.kill(-current.pid, 'SIGKILL')
        } catch {
          // gone
        }
      }
      void cleanup().finally(() => process.exit(130))
    })
  }

  const cells = new Map<string, Cell>()
  try {
    for (const column of columns) {
      let brokers: string[] | undefined
      let unavailable: string | undefined
      console.log(`\n=== ${column.label} ===`)
      if (column.transport === 'kafka') {
        try {
          await waitForOtherLocalBroker()
          const broker: RunningBroker = await findBroker((msg) => console.log(`[broker] ${msg}`))
          cleanups.push(() => broker.stop())
          brokers = broker.brokers
          console.log(`[broker] ${broker.source} at ${brokers.join(',')}, ready in ${broker.timings.startMs} ms`)
        } catch (e) {
          unavailable = `no Kafka broker: ${(e as Error).message.split('\n')[0]}`
          console.log(
            `[broker] ${unavailable}${process.env.COMPAT_REQUIRE_KAFKA === '1' ? ' (COMPAT_REQUIRE_KAFKA=1: failing)' : ' (skipped; COMPAT_REQUIRE_KAFKA=1 fails instead)'}`,
          )
        }
      } else if (column.database === 'embedded') {
        // hold the embedded server for the whole run, so each example reuses it instead of starting its own
        const dataDir = new Kafka({}).config.embedded.dataDir
        const started = Date.now()
        const server = await ensureEmbeddedPostgres({ dataDir, shared: true, log: (msg) => console.log(`[postgres] ${msg}`) })
        cleanups.push(() => server.stop())
        console.log(`[postgres] embedded server ready in ${Date.now() - started} ms`)
      }

      for (const example of examples) {
        const key = `${example.name}|${column.label}`
        const applies = column.transport === 'pgqueue' ? example.modes.has('pgqueue') : example.modes.has('kafka') || example.modes.has('kafkajs')
        if (!applies) {
          cells.set(key, { state: 'n/a' })
          continue
        }
        if (unavailable) {
          cells.set(key, process.env.COMPAT_REQUIRE_KAFKA === '1' ? { state: 'fail', note: 'no broker' } : { state: 'skip', note: 'no broker' })
          continue
        }
        let file = example.file
        if (column.transport === 'kafka' && !example.modes.has('kafka')) {
          try {
            file = asKafkaJS(example)
          } catch (e) {
            console.log(`  ✗ ${example.name}: ${(e as Error).message}`)
            cells.set(key, { state: 'fail', note: 'rewrite' })
            continue
          }
        }
        const cell = await runOne(example.name, file, column, childEnv(column, brokers), o)
        if (file !== example.file) cell.note = cell.note ? `${cell.note}, import 'kafkajs'` : "import 'kafkajs'"
        cells.set(key, cell)
        console.log(
          `  ${cell.state === 'pass' ? '✓' : '✗'} ${example.name} ${((cell.ms ?? 0) / 1000).toFixed(1)}s${cell.note ? ` (${cell.note})` : ''}`,
        )
      }
      await cleanup() // the broker / embedded server of this column
    }
  } finally {
    await cleanup()
  }

  printTable(examples, columns, cells)
  const all = [...cells.values()]
  const passed = all.filter((c) => c.state === 'pass').length
  const failed = all.filter((c) => c.state === 'fail').length
  const skipped = all.filter((c) => c.state === 'skip').length
  if (process.env.CI) {
    fs.writeFileSync(
      path.join(root, '.cache', 'examples.report.json'),
      JSON.stringify({ numPassedTests: passed, numFailedTests: failed, numPendingTests: skipped }),
    )
  }
  if (skipped > 0) console.log(`(${skipped} skipped)`)
  console.log(`examples: ${passed} passed, ${failed} failed`)
  process.exitCode = failed > 0 ? 1 : 0
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
