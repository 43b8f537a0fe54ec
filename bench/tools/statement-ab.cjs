// A/B of SQL statements on one connection, interleaved: per statement, wall time and the server backend's CPU
// time (from /proc/<pid>/stat, so the server must run on this machine). CPU time is what to compare on a loaded
// machine: wall time includes waiting for a core.
// usage: DATABASE_URL=... node bench/tools/statement-ab.cjs [--rounds 10] [--reps 20] a.sql b.sql ...
const fs = require('fs')
const pg = require('pg')

const args = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = args.indexOf(name)
  if (i < 0) return dflt
  const v = Number(args[i + 1])
  args.splice(i, 2)
  return v
}
const rounds = opt('--rounds', 10)
const reps = opt('--reps', 20)
const files = args
const TICK_MS = 10 // USER_HZ = 100

function cpuMs(pid) {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(f[11]) + Number(f[12])) * TICK_MS
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function main() {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL })
  await client.connect()
  const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid
  const texts = files.map((f) => fs.readFileSync(f, 'utf8'))
  const wall = files.map(() => [])
  const cpu = files.map(() => [])
  for (const t of texts) await client.query(t) // warm
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < texts.length; i++) {
      const c0 = cpuMs(pid)
      const t0 = process.hrtime.bigint()
      for (let k = 0; k < reps; k++) await client.query(texts[i])
      wall[i].push(Number(process.hrtime.bigint() - t0) / 1e6 / reps)
      cpu[i].push((cpuMs(pid) - c0) / reps)
    }
  }
  for (let i = 0; i < files.length; i++) {
    const ratio = (xs, base) => (median(xs) / median(base)).toFixed(2)
    console.log(
      `${files[i]}: wall ${median(wall[i]).toFixed(2)} ms (x${ratio(wall[i], wall[0])}), server CPU ${median(cpu[i]).toFixed(2)} ms (x${ratio(cpu[i], cpu[0])})`,
    )
  }
  await client.end()
}
main().catch((e) => {
  console.error(e)
  process.exit(1)
})
