// docs/guarantees.md's "Open exceptions" cannot go stale: each row names an `it.fails` test that exists (vitest fails
// that test the day the bug is fixed), and every `.fails` test in the repository has a row.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const root = path.resolve(__dirname, '../../..')

interface Exception {
  file: string
  name: string
}

/** The table's rows: | promise | `file` | test name | */
function listedExceptions(markdown: string): Exception[] {
  const start = markdown.indexOf('\n## Open exceptions')
  if (start < 0) throw new Error('docs/guarantees.md has no "## Open exceptions" section')
  const next = markdown.indexOf('\n## ', start + 1)
  const section = markdown.slice(start, next < 0 ? undefined : next)
  const rows = section.split('\n').filter((l) => l.startsWith('|'))
  return rows.slice(2).map((row) => {
    const cells = row.split('|').map((c) => c.trim())
    const file = /^`([^`]+)`$/.exec(cells[2] ?? '')?.[1]
    if (!file || !cells[3]) throw new Error(`Open exceptions row needs | promise | \`file\` | test name |: ${row}`)
    return { file, name: cells[3] }
  })
}

const FAILS = /\b(?:it|test)(?:\.\w+)*\.fails(?:\.\w+)*\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g

/** Every `it.fails(...)` / `test.fails(...)` with a literal name in the source. */
function failingTests(file: string, source: string): Exception[] {
  return [...source.matchAll(FAILS)].map((m) => ({ file, name: m[2]! }))
}

function testFiles(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`
    if (e.isDirectory()) return e.name === 'node_modules' || e.name.startsWith('.') ? [] : testFiles(rel)
    return /\.test\.m?ts$/.test(e.name) ? [rel] : []
  })
}

const key = (e: Exception) => `${e.file} › ${e.name}`

describe('docs/guarantees.md open exceptions', () => {
  it('lists exactly the it.fails tests of the repository', () => {
    const listed = listedExceptions(fs.readFileSync(path.join(root, 'docs/guarantees.md'), 'utf8'))
      .map(key)
      .sort()
    const present = ['test', 'compat-tests']
      .flatMap(testFiles)
      .filter((f) => f !== 'test/unit/docs/openExceptions.test.ts') // its own examples below
      .flatMap((f) => failingTests(f, fs.readFileSync(path.join(root, f), 'utf8')))
      .map(key)
      .sort()
    expect(listed, 'rows whose test is not an it.fails test of that file (fixed? then drop the row)').toEqual(
      listed.filter((k) => present.includes(k)),
    )
    expect(present, 'it.fails tests without a row in docs/guarantees.md').toEqual(present.filter((k) => listed.includes(k)))
  })

  it('reads the table and the tests as the docs describe them (the check itself can fail)', () => {
    const md =
      '# G\n\n## Open exceptions\n\ntext\n\n| Promise broken | File | Test |\n|---|---|---|\n| p | `test/a.test.ts` | [bug] x |\n\n## Next\n| a | b |'
    expect(listedExceptions(md)).toEqual([{ file: 'test/a.test.ts', name: '[bug] x' }])
    expect(failingTests('f', "it.fails('[bug] x', () => {})\nit('y', f)\ntest.fails.skip(\"[bug] z\", g)")).toEqual([
      { file: 'f', name: '[bug] x' },
      { file: 'f', name: '[bug] z' },
    ])
    expect(() => listedExceptions('# no section')).toThrow(/Open exceptions/)
  })
})
