// --json is uniform: counts and offsets are JSON numbers in every command's output (the HTTP API's shape), never
// the decimal strings the library keeps internally.
import { spawn } from 'node:child_process'
import { beforeAll, describe, expect, it } from 'vitest'
import { useTestSchema } from '../../helpers/db.js'

const db = useTestSchema('clijson')

function cli(args: string[], input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env }
  for (const k of Object.keys(env)) if (k.startsWith('DATAHUB_') || k.startsWith('PG') || k === 'DATABASE_URL') delete env[k]
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args, '--url', db.connectionString, '--schema', db.schema], { env })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  child.stdin.end(input)
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })))
}

async function json(args: string[]): Promise<unknown[]> {
  const { code, stdout, stderr } = await cli([...args, '--json'])
  expect(code, stderr).toBe(0)
  const text = stdout.trim()
  return text.startsWith('[') || (text.startsWith('{') && !text.includes('}\n{')) ? [JSON.parse(text)] : text.split('\n').map((l) => JSON.parse(l))
}

/** Paths of string values that are integers, outside the fields that are free text (names, keys, values). */
function numericStrings(value: unknown, path = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => numericStrings(v, `${path}[${i}]`))
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) =>
      ['key', 'value', 'topic', 'group', 'groupId', 'name', 'memberId', 'clientId', 'metadata'].includes(k) ? [] : numericStrings(v, `${path}.${k}`),
    )
  }
  return typeof value === 'string' && /^-?\d+$/.test(value) ? [path] : []
}

beforeAll(async () => {
  expect((await cli(['migrate'])).code).toBe(0)
  expect((await cli(['topics', 'create', 'orders', '-p', '2'])).code).toBe(0)
  expect((await cli(['produce', 'orders', '--key-separator', ':'], 'a:1\nb:2\nc:3\n')).code).toBe(0)
}, 120_000)

describe('--json', () => {
  it.each([
    [['consume', 'orders', '-g', 'billing', '--from-beginning', '--max-messages', '2']],
    [['groups', 'lag']],
    [['groups', 'lag', '--detailed']],
    [['groups', 'describe', 'billing']],
    [['groups', 'list']],
    [['topics', 'describe', 'orders']],
    [['topics', 'list']],
    [['maintenance', 'run']],
  ])('%j prints numbers as numbers', { timeout: 60_000 }, async (args) => {
    const out = await json(args)
    expect(out.length).toBeGreaterThan(0)
    expect(numericStrings(out)).toEqual([])
  })

  it('gives totalLag as the number the HTTP API gives', { timeout: 60_000 }, async () => {
    const [groups] = (await json(['groups', 'lag'])) as [Array<{ group: string; topics: Array<{ totalLag: unknown }> }>]
    const billing = groups.find((g) => g.group === 'billing')!
    expect(typeof billing.topics[0]!.totalLag).toBe('number')
    expect(billing.topics[0]!.totalLag).toBe(1)
  })
})
