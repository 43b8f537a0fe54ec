// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by file.
// usage: node bench/tools/summarize-cpuprofile.cjs <file.cpuprofile> [top-n]
const fs = require('fs')
const file = process.argv[2]
const p = JSON.parse(fs.readFileSync(file, 'utf8'))
const byId = new Map(p.nodes.map((n) => [n.id, n]))
const dt = p.timeDeltas
const counts = new Map()
for (let i = 0; i < p.samples.length; i++) counts.set(p.samples[i], (counts.get(p.samples[i]) || 0) + (dt[i] || 0))
let total = 0
const fnSelf = new Map(),
  fileSelf = new Map()
for (const [id, us] of counts) {
  const n = byId.get(id)
  total += us
  const cf = n.callFrame
  const key = `${cf.functionName || '(anon)'} ${cf.url.replace(/.*node_modules\//, 'nm/').replace(/.*\/work\/main\//, '')}:${cf.lineNumber}`
  fnSelf.set(key, (fnSelf.get(key) || 0) + us)
  const f = cf.url.replace(/.*node_modules\//, 'nm/').replace(/.*\/work\/main\//, '') || cf.functionName
  fileSelf.set(f, (fileSelf.get(f) || 0) + us)
}
const top = (m, k) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([n, us]) => `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${n}`)
    .join('\n')
console.log(`total ${(total / 1000).toFixed(0)} ms\n-- functions\n${top(fnSelf, Number(process.argv[3] || 25))}\n-- files\n${top(fileSelf, 15)}`)
