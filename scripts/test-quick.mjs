#!/usr/bin/env node
// `npm run test:quick [-- files...]`: the edit-test loop, well under a minute. The unit project, plus the integration
// test files this change touches (changed, added or untracked against the merge base with main, or against HEAD
// without a main branch), plus any test files named on the command line. It proves less than `npm test`: run that
// before you push (CONTRIBUTING.md).
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'

const git = (...args) => {
  const r = spawnSync('git', args, { encoding: 'utf8' })
  return r.status === 0 ? r.stdout.trim() : undefined
}
const base = git('merge-base', 'HEAD', 'main') ?? 'HEAD'
const touched = [
  ...(git('diff', '--name-only', base) ?? '').split('\n'),
  ...(git('ls-files', '--others', '--exclude-standard') ?? '').split('\n'),
].filter((f) => /^test\/integration\/.*\.test\.ts$/.test(f) && fs.existsSync(f))
const named = process.argv.slice(2)
const integration = [...new Set([...touched, ...named.filter((f) => f.startsWith('test/integration/'))])]

console.log(`test:quick: unit${integration.length ? ` + ${integration.join(' ')}` : ''} (base ${base.slice(0, 12)})`)
const vitest = (args) => spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...args], { stdio: 'inherit' }).status ?? 1
const unit = vitest(['--project', 'unit', ...named.filter((f) => f.startsWith('test/unit/'))])
const int = integration.length > 0 ? vitest(['--project', 'integration', ...integration]) : 0
process.exitCode = unit || int
