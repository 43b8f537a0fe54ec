#!/usr/bin/env node
// `node scripts/test-timings.mjs <vitest JSON report> [cpu report] [--top N] [--json]`: where a vitest run's time went.
// Per test file: wall seconds (from the CPU report when given, else the report's start/end), the sum of its tests' durations (the rest is set-up: import,
// beforeAll/afterAll, schema creation), and from the CPU report of test/setup/cpuReport.ts (VITEST_CPU_REPORT=<file>)
// the CPU seconds of the worker and of the child processes it spawned. CPU seconds do not grow with the machine's
// load, wall seconds do: compare two runs by CPU, or by wall only when both ran side by side.
//   DATABASE_URL=... VITEST_CPU_REPORT=.cache/cpu.jsonl npx vitest run --reporter=default --reporter=json \
//     --outputFile.json=.cache/vitest.report.json && node scripts/test-timings.mjs .cache/vitest.report.json .cache/cpu.jsonl
import fs from 'node:fs'
import path from 'node:path'

const args = process.argv.slice(2)
const flag = (name) => {
  const i = args.indexOf(name)
  if (i < 0) return undefined
  const [, value] = args.splice(i, 2)
  return value ?? ''
}
const top = Number(flag('--top') ?? 10)
const asJson = args.includes('--json') && args.splice(args.indexOf('--json'), 1)
const [reportFile, cpuFile] = args
if (!reportFile) {
  console.error('usage: node scripts/test-timings.mjs <vitest JSON report> [cpu report (jsonl)] [--top N] [--json]')
  process.exit(2)
}

const rel = (f) => path.relative(process.cwd(), f)
const report = JSON.parse(fs.readFileSync(reportFile, 'utf8'))
const cpu = new Map()
if (cpuFile) {
  for (const line of fs.readFileSync(cpuFile, 'utf8').split('\n').filter(Boolean)) {
    const row = JSON.parse(line)
    cpu.set(rel(row.file), row)
  }
}

const files = report.testResults.map((f) => {
  const c = cpu.get(rel(f.name))
  // the report's start/end span the tests only; the CPU report's wall time starts before the file's imports
  const wallS = c?.wallS ?? (f.endTime - f.startTime) / 1000
  const testsS = f.assertionResults.reduce((sum, a) => sum + (a.duration ?? 0), 0) / 1000
  return {
    file: rel(f.name),
    status: f.status,
    tests: f.assertionResults.length,
    wallS,
    testsS,
    setupS: Math.max(0, wallS - testsS),
    cpuS: c?.cpuS,
    childCpuS: c?.childCpuS,
  }
})
files.sort((a, b) => b.wallS - a.wallS)

const sum = (key) => files.reduce((s, f) => s + (f[key] ?? 0), 0)
const totals = {
  files: files.length,
  tests: sum('tests'),
  wallS: (Math.max(...report.testResults.map((f) => f.endTime)) - report.startTime) / 1000,
  fileWallS: sum('wallS'),
  testsS: sum('testsS'),
  setupS: sum('setupS'),
  cpuS: cpuFile ? sum('cpuS') : undefined,
  childCpuS: cpuFile ? sum('childCpuS') : undefined,
}

if (asJson) {
  console.log(JSON.stringify({ totals, files }, null, 2))
} else {
  const n = (v, d = 1) => (v === undefined ? '-' : v.toFixed(d))
  console.log(
    `${totals.files} files, ${totals.tests} tests: run ${n(totals.wallS)} s wall; per file summed: ${n(totals.fileWallS)} s wall ` +
      `(${n(totals.testsS)} s in tests, ${n(totals.setupS)} s set-up/teardown)` +
      (cpuFile ? `, ${n(totals.cpuS)} CPU-s in workers + ${n(totals.childCpuS)} CPU-s in their child processes` : ''),
  )
  console.log(`\nslowest ${top} files by wall time:`)
  console.log('  wall s   tests s  set-up s   CPU s  child CPU s  file')
  for (const f of files.slice(0, top)) {
    console.log(
      `${n(f.wallS).padStart(8)}${n(f.testsS).padStart(10)}${n(f.setupS).padStart(10)}${n(f.cpuS).padStart(8)}${n(f.childCpuS).padStart(13)}  ${f.file}`,
    )
  }
  if (cpuFile) {
    const byCpu = [...files].sort((a, b) => (b.cpuS ?? 0) + (b.childCpuS ?? 0) - (a.cpuS ?? 0) - (a.childCpuS ?? 0))
    console.log(`\nmost expensive ${top} files by CPU (worker + children):`)
    for (const f of byCpu.slice(0, top)) console.log(`${n((f.cpuS ?? 0) + (f.childCpuS ?? 0)).padStart(8)}  ${f.file}`)
  }
}
