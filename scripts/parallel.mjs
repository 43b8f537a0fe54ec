#!/usr/bin/env node
// Runs independent stages side by side: `node scripts/parallel.mjs 'name=shell command' ...`. Each stage's output is
// kept in a file and printed whole when the stage ends (two interleaved logs are unreadable), followed by one line per
// stage with its status, wall time and CPU time. Every stage runs to its end whatever the others do; the exit code is non-zero
// when any failed. PARALLEL_SERIAL=1 runs them one after another (same output), e.g. to time a stage alone.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const stages = process.argv.slice(2).map((arg) => {
  const eq = arg.indexOf('=')
  if (eq <= 0) throw new Error(`expected name=command, got ${JSON.stringify(arg)}`)
  return { name: arg.slice(0, eq), command: arg.slice(eq + 1) }
})
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parallel-'))

/** CPU seconds (user + system) of a stage's processes, from bash's `times` (its second line: the children). */
function cpuSeconds(timesFile) {
  const lines = fs.existsSync(timesFile) ? fs.readFileSync(timesFile, 'utf8').trim().split('\n') : []
  const m = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/.exec(lines[1] ?? '')
  return m ? Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]) : undefined
}

function run({ name, command }) {
  const base = path.join(dir, name.replace(/[^\w.-]/g, '_'))
  const file = `${base}.log`
  const out = fs.openSync(file, 'w')
  const started = Date.now()
  console.log(`[parallel] ${name}: started (${command})`)
  // `times` after the command: the CPU time of everything the stage ran, which unlike its wall time does not grow
  // with what else the machine runs (processes the stage left running are not in it)
  const script = `${command}\n__rc=$?; times > '${base}.times'; exit $__rc`
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { stdio: ['ignore', out, out], env: process.env })
    child.on('exit', (code, signal) => {
      fs.closeSync(out)
      const seconds = (Date.now() - started) / 1000
      const cpu = cpuSeconds(`${base}.times`)
      const status = code === 0 ? 'ok' : `FAILED (${signal ?? `exit ${code}`})`
      process.stdout.write(`\n===== ${name}: ${status} in ${seconds.toFixed(0)} s${cpu === undefined ? '' : `, ${cpu.toFixed(0)} CPU-s`} =====\n`)
      process.stdout.write(fs.readFileSync(file))
      resolve({ name, ok: code === 0, status, seconds, cpu })
    })
  })
}

const results = []
if (process.env.PARALLEL_SERIAL === '1') for (const s of stages) results.push(await run(s))
else results.push(...(await Promise.all(stages.map(run))))
fs.rmSync(dir, { recursive: true, force: true })
console.log('')
for (const r of results) {
  const cpu = r.cpu === undefined ? '' : ` ${r.cpu.toFixed(0).padStart(6)} CPU-s`
  console.log(`[parallel] ${r.name.padEnd(14)} ${r.status.padEnd(10)} ${r.seconds.toFixed(0).padStart(5)} s${cpu}`)
}
process.exitCode = results.every((r) => r.ok) ? 0 : 1
