#!/usr/bin/env node
// Runs independent stages side by side: `node scripts/parallel.mjs 'name=shell command' ...`. Each stage's output is
// kept in a file and printed whole when the stage ends (two interleaved logs are unreadable), followed by one line per
// stage with its status and wall time. Every stage runs to its end whatever the others do; the exit code is non-zero
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

function run({ name, command }) {
  const file = path.join(dir, `${name.replace(/[^\w.-]/g, '_')}.log`)
  const out = fs.openSync(file, 'w')
  const started = Date.now()
  console.log(`[parallel] ${name}: started (${command})`)
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], { stdio: ['ignore', out, out], env: process.env })
    child.on('exit', (code, signal) => {
      fs.closeSync(out)
      const seconds = (Date.now() - started) / 1000
      const status = code === 0 ? 'ok' : `FAILED (${signal ?? `exit ${code}`})`
      process.stdout.write(`\n===== ${name}: ${status} in ${seconds.toFixed(0)} s =====\n`)
      process.stdout.write(fs.readFileSync(file))
      resolve({ name, ok: code === 0, status, seconds })
    })
  })
}

const results = []
if (process.env.PARALLEL_SERIAL === '1') for (const s of stages) results.push(await run(s))
else results.push(...(await Promise.all(stages.map(run))))
fs.rmSync(dir, { recursive: true, force: true })
console.log('')
for (const r of results) console.log(`[parallel] ${r.name.padEnd(14)} ${r.status.padEnd(10)} ${r.seconds.toFixed(0).padStart(5)} s`)
process.exitCode = results.every((r) => r.ok) ? 0 : 1
