#!/usr/bin/env node
// How long `require('kafkajs-pgqueue')` takes in a fresh process, and which dependencies it loads.
// Usage: node scripts/measure-require.mjs [entry] [runs]   (default: dist/index.js, 9 runs; prints the median)
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const entry = path.resolve(process.argv[2] ?? path.join(root, 'dist', 'index.js'))
const runs = Number(process.argv[3] ?? 9)
const probe = `
const t = process.hrtime.bigint(); require(${JSON.stringify(entry)}); const ms = Number(process.hrtime.bigint() - t) / 1e6
const pkgs = new Set(Object.keys(require.cache).filter((k) => k.includes('/node_modules/')).map((k) => {
  const parts = k.split('/node_modules/').pop().split('/'); return parts[0].startsWith('@') ? parts[0] + '/' + parts[1] : parts[0] }))
console.log(JSON.stringify({ ms, pkgs: [...pkgs].sort() }))`
const samples = Array.from({ length: runs }, () => JSON.parse(execFileSync(process.execPath, ['-e', probe], { encoding: 'utf8' })))
const times = samples.map((s) => s.ms).sort((a, b) => a - b)
console.log(
  `require(${path.relative(process.cwd(), entry)}): median ${times[Math.floor(runs / 2)].toFixed(0)} ms, min ${times[0].toFixed(0)} ms over ${runs} runs`,
)
console.log(`dependencies loaded: ${samples[0].pkgs.join(' ')}`)
