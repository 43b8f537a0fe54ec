// The register hook next to @opentelemetry/instrumentation-kafkajs: code that loads `kafkajs` by name gets this
// package, and the instrumentation must not wrap it as well. Behind the ESM loader chain "register hook, then the
// instrumentation's hook" the instrumentation matches the import by its specifier and patches this package when
// its version is in the supported range (>=0.3.0 <3): each send and process then had two spans, ours and one
// labelled messaging.system kafka (tracing/foreignWrappers.ts). The installed package is given version 1.0.0 so
// the case is the one every release from 0.3.0 on will meet. Run from the packed tarball, as node_modules holds it:
// the instrumentation recognises packages by their node_modules path.
import { execFile, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useTestSchema } from '../../helpers/db.js'
import { packTarball, root } from '../package/tarball.js'

const run = promisify(execFile)
const db = useTestSchema('regtrace')
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kafkajs-pgqueue-regtrace-'))
const app = path.join(tmp, 'app')

interface Span {
  name: string
  scope: string
  system?: string
  traceId: string
  spanId: string
  parentSpanId?: string
}

beforeAll(() => {
  const { tarball } = packTarball(tmp)
  const installed = path.join(app, 'node_modules', 'kafkajs-pgqueue')
  fs.mkdirSync(installed, { recursive: true })
  const untar = spawnSync('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1'], { encoding: 'utf8' })
  expect(untar.status, untar.stderr).toBe(0)
  const manifest = path.join(installed, 'package.json')
  fs.writeFileSync(manifest, JSON.stringify({ ...JSON.parse(fs.readFileSync(manifest, 'utf8')), version: '1.0.0' }, null, 2))
  // the app's other dependencies (kafkajs, pg, @opentelemetry/*): this repository's, linked rather than installed
  const deps = path.join(root, 'node_modules')
  for (const entry of fs.readdirSync(deps)) {
    if (entry === 'kafkajs-pgqueue' || entry.startsWith('.')) continue
    fs.symlinkSync(path.join(deps, entry), path.join(app, 'node_modules', entry))
  }
  for (const f of ['otel.mjs', 'app.cjs']) fs.copyFileSync(path.join(root, 'test', 'fixtures', 'registerTracing', f), path.join(app, f))
}, 600_000)

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

async function traced(flags: string[], module: 'cjs' | 'esm'): Promise<{ topic: string; pgqueue: boolean; spans: Span[] }> {
  const env = {
    ...process.env,
    MODULE: module,
    DATAHUB_MESSAGING_TRANSPORT: 'pgqueue',
    DATABASE_URL: db.connectionString,
    DATAHUB_PGQUEUE_SCHEMA: db.schema,
    DATAHUB_PGQUEUE_ENABLED: 'true',
  }
  const { stdout } = await run(process.execPath, [...flags, 'app.cjs'], { cwd: app, env, timeout: 120_000 })
  return JSON.parse(stdout.trim().split('\n').pop()!)
}

describe('register hook with @opentelemetry/instrumentation-kafkajs', () => {
  it.each([
    ['require(), --require register', ['--require', 'kafkajs-pgqueue/register', '--import', './otel.mjs'], 'cjs'],
    ['import(), register hook before the instrumentation hook', ['--import', 'kafkajs-pgqueue/register', '--import', './otel.mjs'], 'esm'],
    ['import(), instrumentation hook before the register hook', ['--import', './otel.mjs', '--import', 'kafkajs-pgqueue/register'], 'esm'],
  ] as const)("%s: one span per operation, this package's", { timeout: 150_000 }, async (_name, flags, module) => {
    const { topic, pgqueue, spans } = await traced([...flags], module)
    expect(pgqueue, 'the app got this package for kafkajs').toBe(true)
    const named = (name: string) => spans.filter((s) => s.name === name)
    const summary = spans.map((s) => `${s.name} (${s.scope}, ${s.system})`).join('; ')
    expect(named(`send ${topic}`), summary).toHaveLength(1)
    expect(named(`process ${topic}`), summary).toHaveLength(1)
    expect(
      spans.filter((s) => s.scope !== 'app').every((s) => s.scope === 'kafkajs-pgqueue' && s.system === 'pgqueue'),
      summary,
    ).toBe(true)
    const [root] = named('app')
    const [send] = named(`send ${topic}`)
    const [process] = named(`process ${topic}`)
    expect(send).toMatchObject({ traceId: root!.traceId, parentSpanId: root!.spanId })
    expect(process).toMatchObject({ traceId: send!.traceId, parentSpanId: send!.spanId })
  })
})
