// Opt-in (VITEST_CPU_REPORT=<file>): appends one JSON line per test file: the worker's CPU seconds (user+system, from
// process.cpuUsage()), the CPU seconds of the child processes it spawned and reaped (fixtures, the CLI: cutime+cstime
// of /proc/self/stat, Linux only) and wall seconds from this setup file to the file's last afterAll. CPU time is what a
// file costs whatever else the machine runs; wall time is not (scripts/test-timings.mjs reads both). PostgreSQL's own
// CPU (the server's backends) is not in either.
import fs from 'node:fs'
import { afterAll, beforeAll } from 'vitest'

const out = process.env.VITEST_CPU_REPORT

/** CPU seconds of reaped children (fields 16 and 17 of /proc/self/stat, in clock ticks of 1/100 s). */
function childCpuSeconds(): number {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[13]) + Number(fields[14])) / 100
  } catch {
    return 0
  }
}

if (out) {
  const cpu0 = process.cpuUsage()
  const child0 = childCpuSeconds()
  const wall0 = performance.now()
  let file = ''
  // eslint-disable-next-line no-empty-pattern -- vitest requires a destructuring pattern for the first argument
  beforeAll(({}, suite) => {
    file = 'filepath' in suite ? String(suite.filepath) : suite.name
  })
  afterAll(() => {
    const cpu = process.cpuUsage(cpu0)
    const line = {
      file,
      cpuS: (cpu.user + cpu.system) / 1e6,
      childCpuS: childCpuSeconds() - child0,
      wallS: (performance.now() - wall0) / 1000,
    }
    fs.appendFileSync(out, `${JSON.stringify(line)}\n`)
  })
}
