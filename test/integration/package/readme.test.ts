// Every TypeScript snippet of the README runs and exits by itself (a snippet that leaves a connection open hangs
// and fails here), on PostgreSQL with DATAHUB_MESSAGING_TRANSPORT=pgqueue, importing the package by its name.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { useTestSchema } from '../../helpers/db.js'
import { root } from './tarball.js'

const run = promisify(execFile)
const db = useTestSchema('readme')
// inside the repository, so tsconfig.json's paths resolve 'kafkajs-pgqueue' to src/
fs.mkdirSync(path.join(root, '.cache'), { recursive: true })
const scratch = fs.mkdtempSync(path.join(root, '.cache', 'readme-'))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

const snippets = [...fs.readFileSync(path.join(root, 'README.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)

describe('README snippets', () => {
  it('has some', () => expect(snippets.length).toBeGreaterThanOrEqual(2))

  it.each(snippets.map((code, i) => [i + 1, code] as const))('snippet %i runs and exits', { timeout: 90_000 }, async (n, code) => {
    // .mts: the snippets use top-level await, as an ES module app would
    const file = path.join(scratch, `snippet-${n}.mts`)
    fs.writeFileSync(file, code)
    const env = {
      ...process.env,
      DATAHUB_MESSAGING_TRANSPORT: 'pgqueue',
      DATABASE_URL: db.connectionString,
      DATAHUB_PGQUEUE_SCHEMA: db.schema,
      DATAHUB_PGQUEUE_ENABLED: 'true',
    }
    const { stderr } = await run(process.execPath, ['--import', 'tsx', file], { cwd: root, env, timeout: 60_000 })
    expect(stderr).not.toMatch(/Error/)
  })
})
