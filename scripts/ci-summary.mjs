// Prints one closing line for CI from the JSON reports the test runs wrote: "ci: N passed, N failed, N skipped".
import { existsSync, readFileSync, readdirSync } from 'node:fs'

let passed = 0
let failed = 0
let skipped = 0
for (const file of existsSync('.cache') ? readdirSync('.cache') : []) {
  if (!file.endsWith('.report.json')) continue
  const report = JSON.parse(readFileSync(`.cache/${file}`, 'utf8'))
  passed += report.numPassedTests ?? 0
  failed += report.numFailedTests ?? 0
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0)
}
console.log(`ci: ${passed} passed, ${failed} failed, ${skipped} skipped`)
process.exit(failed > 0 ? 1 : 0)
