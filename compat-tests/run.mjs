#!/usr/bin/env node
// `npm run test:compat`: runs the contract suite once per backend and prints a side-by-side table.
// Backends: `--backend <name>` (repeatable) or COMPAT_BACKENDS (default "kafka,pgqueue").
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..')
const vitestBin = path.join(path.dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs')

function backendsFromArgs(argv) {
  const picked = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--backend') picked.push(argv[++i])
    else if (argv[i].startsWith('--backend=')) picked.push(argv[i].slice('--backend='.length))
    else throw new Error(`unknown argument ${argv[i]} (usage: run.mjs [--backend kafka|pgqueue]...)`)
  }
  const list = picked.length ? picked : (process.env.COMPAT_BACKENDS ?? 'kafka,pgqueue').split(',')
  const backends = list.map((b) => b?.trim()).filter(Boolean)
  for (const b of backends) if (!['kafka', 'pgqueue'].includes(b)) throw new Error(`unknown backend ${b}`)
  return backends
}

/**
 * Runs vitest for one backend; resolves with its JSON report (or null) and timings. With `logFile` its output goes
 * there and is printed whole when it ends (two backends side by side would interleave line by line).
 */
function runBackend(backend, scratch, logFile) {
  const jsonFile = path.join(scratch, `${backend}.json`)
  const brokerFile = path.join(scratch, `${backend}-broker.json`)
  const args = [
    vitestBin,
    'run',
    '--config',
    'compat-tests/vitest.config.ts',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${jsonFile}`,
  ]
  const env = {
    ...process.env,
    DATAHUB_MESSAGING_TRANSPORT: backend,
    COMPAT_BROKER_INFO_FILE: brokerFile,
    KAFKAJS_NO_PARTITIONER_WARNING: '1',
    VITE_CONFIG_NATIVE_IGNORE_WARNING: 'true',
  }
  const out = logFile ? fs.openSync(logFile, 'w') : undefined
  if (out === undefined) console.log(`\n=== compat suite: backend ${backend} ===`)
  else console.log(`compat suite: backend ${backend} started (its output follows when it ends)`)
  const started = Date.now()
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: out === undefined ? 'inherit' : ['ignore', out, out] })
    child.on('exit', (code, signal) => {
      if (out !== undefined) {
        fs.closeSync(out)
        process.stdout.write(`\n=== compat suite: backend ${backend} (${((Date.now() - started) / 1000).toFixed(0)} s) ===\n`)
        process.stdout.write(fs.readFileSync(logFile))
      }
      const read = (f) => (fs.existsSync(f) ? JSON.parse(fs.readFileSync(f, 'utf8')) : null)
      // CI's closing summary line counts every report in .cache/
      if (process.env.CI && fs.existsSync(jsonFile)) {
        fs.mkdirSync(path.join(root, '.cache'), { recursive: true })
        fs.copyFileSync(jsonFile, path.join(root, '.cache', `compat-${backend}.report.json`))
      }
      resolve({ backend, code, signal, ms: Date.now() - started, report: read(jsonFile), broker: read(brokerFile) })
    })
  })
}

/** Flattens a vitest JSON report into test id -> {state, reason}. */
function outcomes(run) {
  const rows = new Map()
  for (const file of run.report?.testResults ?? []) {
    const rel = path.relative(path.join(root, 'compat-tests', 'suite'), file.name)
    for (const a of file.assertionResults) {
      const id = `${rel} > ${a.fullName}`
      if (a.status === 'passed') rows.set(id, { state: 'pass' })
      else if (a.status === 'failed') rows.set(id, { state: 'fail' })
      else rows.set(id, { state: 'pending', reason: a.meta?.pending ?? a.status })
    }
    // a file that failed to load has no tests; keep it visible as a failure
    if (file.status === 'failed' && file.assertionResults.length === 0) {
      rows.set(`${rel} (file)`, { state: 'fail', reason: file.message.split('\n')[0] })
    }
  }
  if (!run.report || (run.code !== 0 && rows.size === 0)) {
    rows.set('(suite run)', { state: 'fail', reason: `vitest exited with ${run.signal ?? run.code} and no results` })
  } else if (run.code !== 0 && ![...rows.values()].some((r) => r.state === 'fail')) {
    rows.set('(suite run)', { state: 'fail', reason: `vitest exited with ${run.code} (see its output above)` })
  }
  return rows
}

function cell(o) {
  const short = (reason) => (reason.length > 100 ? `${reason.slice(0, 97)}...` : reason)
  if (!o) return '-'
  if (o.state === 'pending') return `pending (${short(o.reason)})`
  if (o.state === 'fail') return o.reason ? `FAIL (${short(o.reason)})` : 'FAIL'
  return 'pass'
}

function printTable(backends, results) {
  const ids = [...new Set(results.flatMap((r) => [...r.rows.keys()]))].sort()
  const header = ['test', ...backends]
  const lines = ids.map((id) => [id, ...results.map((r) => cell(r.rows.get(id)))])
  const widths = header.map((h, i) => Math.min(110, Math.max(h.length, ...lines.map((l) => l[i].length))))
  const fmt = (cols) => cols.map((c, i) => (i === cols.length - 1 ? c : c.padEnd(widths[i]))).join('  ')
  console.log(`\n${fmt(header)}\n${fmt(widths.map((w) => '-'.repeat(w)))}`)
  for (const l of lines) console.log(fmt(l))
}

const backends = backendsFromArgs(process.argv.slice(2))
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'compat-'))
// The backends side by side: each spends most of its time waiting (on the broker's group protocol, on PostgreSQL, on
// child processes), so together they take little more than the slower one. COMPAT_SERIAL=1 runs them one after another.
const serial = process.env.COMPAT_SERIAL === '1' || backends.length < 2
const runs = serial
  ? await backends.reduce(async (done, backend) => [...(await done), await runBackend(backend, scratch)], Promise.resolve([]))
  : await Promise.all(backends.map((backend) => runBackend(backend, scratch, path.join(scratch, `${backend}.log`))))
const results = runs.map((run) => ({ ...run, rows: outcomes(run) }))
fs.rmSync(scratch, { recursive: true, force: true })

printTable(backends, results)
console.log('')
for (const r of results) {
  const b = r.broker
  const broker = b ? `; broker ${b.source}: ${b.fetchJarsMs === undefined ? '' : `jars fetched ${b.fetchJarsMs} ms, `}ready in ${b.startMs} ms` : ''
  console.log(`${r.backend}: suite ${(r.ms / 1000).toFixed(1)} s${broker}`)
}
const all = results.flatMap((r) => [...r.rows.values()])
const count = (s) => all.filter((o) => o.state === s).length
console.log(`compat: ${count('pass')} passed, ${count('fail')} failed, ${count('pending')} skipped`)
process.exit(count('fail') > 0 ? 1 : 0)
