// npm run check:torture -- [--seconds N] [--seed S] [--processes P] [--faults list] ...: one randomized,
// fault-injecting run checked against docs/guarantees.md. Exit 0 when no guarantee broke, 1 on a violation, 2 on
// bad options or a run that could not be carried out.
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { VIOLATION_KINDS } from './checker.js'
import { parseOptions, USAGE } from './options.js'
import { runTorture } from './orchestrator.js'
import { summarize } from './summary.js'

async function main() {
  let opts
  try {
    opts = parseOptions(process.argv.slice(2))
  } catch (e) {
    console.error((e as Error).message === USAGE ? USAGE : `${(e as Error).message}\n\n${USAGE}`)
    process.exit(2)
  }
  const started = Date.now()
  const run = await runTorture(opts, (line) => console.log(`[torture ${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`))
  const summary = summarize(opts.seed, opts.transport, run.operations, run.result, run.phases, run.firstViolationAfter)
  console.log(summary)
  // kept beside the history, for a long run read later
  writeFileSync(path.join(run.dir, 'summary.txt'), `${summary}\n`)
  console.log(`history: ${run.dir} (summary.txt)`)
  if (opts.report) {
    const broken = new Set(run.result.violations.map((v) => v.kind))
    const report = { numPassedTests: VIOLATION_KINDS.length - broken.size, numFailedTests: broken.size, numPendingTests: 0, numTodoTests: 0 }
    writeFileSync(opts.report, JSON.stringify(report))
  }
  process.exit(run.result.violations.length > 0 ? 1 : 0)
}

main().catch((e) => {
  console.error('torture run failed:', e)
  process.exit(2)
})
