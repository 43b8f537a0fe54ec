// `kafkajs-pgqueue serve` as an operator runs it: a token from the environment or a file guards every request, and
// a non-loopback address without one is refused before anything listens.
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { useTestSchema } from '../../helpers/db.js'
import { raw } from './support.js'

const db = useTestSchema('security_serve')
const TOKEN = 'serve-token-0123456789abcdef'
const children = new Set<ReturnType<typeof spawn>>()
afterAll(() => children.forEach((c) => c.kill('SIGKILL')))

function serve(args: string[], env: Record<string, string> = {}) {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('DATAHUB_') && !k.startsWith('PG') && k !== 'DATABASE_URL'),
  )
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', '--url', db.connectionString, '--schema', db.schema, ...args],
    {
      env: { ...clean, DATAHUB_PGQUEUE_ENABLED: 'true', ...env },
      stdio: 'pipe',
    },
  )
  children.add(child)
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d))
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => (children.delete(child), resolve(code))))
  const url = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const m = /Serving on (\S+)/.exec(out)
      if (m) resolve(m[1]!)
    })
    void exited.then(() => reject(new Error(`serve exited: ${out}`)))
  })
  url.catch(() => undefined) // awaited only by the tests that expect it to start
  return { child, exited, url, output: () => out }
}

describe('serve authentication', () => {
  it('refuses a non-loopback address without a token (exit 2, before listening)', async () => {
    const s = serve(['--host', '0.0.0.0'])
    expect(await s.exited).toBe(2)
    console.log(`serve: --host 0.0.0.0 without a token -> ${s.output().split('\n')[0]}`)
    expect(s.output()).toMatch(/without authentication/)
    const weak = serve([], { DATAHUB_PGQUEUE_OPS_TOKEN: 'short' })
    expect(await weak.exited).toBe(2)
    expect(weak.output()).toMatch(/at least 16 characters/)
  })

  it('a token from DATAHUB_PGQUEUE_OPS_TOKEN or --token-file is required on every route', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'serve-token-'))
    const file = path.join(dir, 'token')
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 })
    for (const [label, args, env] of [
      ['env', [], { DATAHUB_PGQUEUE_OPS_TOKEN: TOKEN }],
      ['file', ['--token-file', file], {}],
    ] as const) {
      const s = serve([...args], env)
      const url = await s.url
      const anonymous = await raw(`${url}/health`, 'GET')
      const authed = await raw(`${url}/health`, 'GET', { headers: { authorization: `Bearer ${TOKEN}` } })
      expect([label, anonymous.status, authed.status]).toEqual([label, 401, 200])
      s.child.kill('SIGTERM')
      expect(await s.exited).toBe(0)
    }
  })
})
