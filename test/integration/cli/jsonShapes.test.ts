// docs/cli.md documents each command's --json output by example. This runs the page's commands, in the page's
// order, on PostgreSQL and checks every output against the example's shape, with the page's conventions: `key?`
// may be absent or null, `<name>` stands for any keys, every array element has the shape of the one shown. No key
// may be missing or undocumented, and every value must have the documented JSON type (a number is no string).
import fs from 'node:fs'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import type { Consumer } from 'kafkajs'
import { afterAll, describe, expect, it } from 'vitest'
import { COMMANDS, runCli } from '../../../src/cli/main.js'
import { deadLetter } from '../../../src/deadLetter/index.js'
import { useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('cli_shapes')
const PAGE = path.resolve(__dirname, '../../../docs/cli.md')

interface Documented {
  args: string[]
  stdin: string
  /** the example; one per line for JSON-lines output */
  examples: unknown[]
  jsonLines: boolean
}

/**
 * Each ```sh block of one `kafkajs-pgqueue …` line (optionally fed by `printf '…' |`) and the block after it:
 * ```json for one JSON document, ```jsonl for one JSON object per line.
 */
function documentedCommands(): Documented[] {
  const blocks = [...fs.readFileSync(PAGE, 'utf8').matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, body: m[2]!.trim() }))
  return blocks.flatMap((block, i) => {
    if (block.lang !== 'sh') return []
    const next = blocks[i + 1]
    if (next?.lang !== 'json' && next?.lang !== 'jsonl') throw new Error(`docs/cli.md: "${block.body}" has no json or jsonl block after it`)
    const piped = /^printf '(.*)' \| (.*)$/.exec(block.body)
    const line = piped ? piped[2]! : block.body
    if (!line.startsWith('kafkajs-pgqueue ')) throw new Error(`docs/cli.md: not a command line: ${block.body}`)
    const jsonLines = next.lang === 'jsonl'
    return [
      {
        args: line.split(/\s+/).slice(1),
        stdin: piped ? piped[1]!.replace(/\\n/g, '\n') : '',
        examples: jsonLines ? next.body.split('\n').map((l) => JSON.parse(l)) : [JSON.parse(next.body)],
        jsonLines,
      },
    ]
  })
}

const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v)
const isRecord = (v: unknown): v is Record<string, unknown> => kind(v) === 'object'

/** Where `actual` departs from the documented example's shape (empty when it matches). */
function shapeErrors(documented: unknown, actual: unknown, at = '$'): string[] {
  if (Array.isArray(documented)) {
    if (!Array.isArray(actual)) return [`${at}: documented an array, got ${kind(actual)}`]
    return documented.length === 0 ? [] : actual.flatMap((a, i) => shapeErrors(documented[0], a, `${at}[${i}]`))
  }
  if (isRecord(documented)) {
    if (!isRecord(actual)) return [`${at}: documented an object, got ${kind(actual)}`]
    const entries = Object.entries(documented)
    const anyKey = entries.find(([k]) => /^<.+>$/.test(k))?.[1]
    const named = new Map(entries.filter(([k]) => !/^<.+>$/.test(k)).map(([k, v]) => [k.replace(/\?$/, ''), { optional: k.endsWith('?'), v }]))
    const errors: string[] = []
    for (const [name, { optional, v }] of named) {
      if (actual[name] === undefined || actual[name] === null) {
        if (!optional) errors.push(`${at}.${name}: documented, but ${actual[name] === null ? 'null' : 'missing'}`)
      } else errors.push(...shapeErrors(v, actual[name], `${at}.${name}`))
    }
    for (const [k, v] of Object.entries(actual)) {
      if (named.has(k)) continue
      if (anyKey === undefined) errors.push(`${at}.${k}: not documented`)
      else errors.push(...shapeErrors(anyKey, v, `${at}.${k}`))
    }
    return errors
  }
  return kind(documented) === kind(actual) ? [] : [`${at}: documented ${kind(documented)}, got ${kind(actual)} ${JSON.stringify(actual)}`]
}

async function cli(args: string[], input: string) {
  const [stdin, stdout, stderr] = [new PassThrough(), new PassThrough(), new PassThrough()]
  let out = ''
  let err = ''
  stdout.on('data', (d) => (out += d))
  stderr.on('data', (d) => (err += d))
  stdin.end(input)
  const code = await runCli([...args, '--url', t.db.connectionString, '--schema', t.db.schema], { stdin, stdout, stderr })
  return { code, stdout: out, stderr: err }
}

/**
 * State the page's commands need that no command makes: a message of `orders` dead-lettered by the group
 * `fulfilment` into `orders.dlq`, whose member keeps running for `groups describe fulfilment`.
 */
let fulfilment: Consumer | undefined
const stopFulfilment = async () => {
  await fulfilment?.disconnect()
  fulfilment = undefined
}
afterAll(stopFulfilment)
const PREPARE: Record<string, () => Promise<void>> = {
  'groups describe fulfilment --json': async () => {
    const producer = await t.producer()
    await producer.send({ topic: 'orders', messages: [{ key: 'k1', value: 'poison' }] })
    const dl = deadLetter(t.kafka, { groupId: 'fulfilment', topic: 'orders.dlq', maxAttempts: 2, backoff: { initialMs: 5, maxMs: 5 } })
    await dl.connect()
    const moved = new Promise<void>((resolve) => dl.on(dl.events.DEAD_LETTER, () => resolve()))
    fulfilment = t.kafka.consumer({ groupId: 'fulfilment' })
    await fulfilment.connect()
    await fulfilment.subscribe({ topic: 'orders', fromBeginning: true })
    await fulfilment.run({
      eachMessage: dl.eachMessage(async ({ message }) => {
        if (message.value?.toString() === 'poison') throw new Error('bad payload')
      }),
    })
    await moved
    await dl.disconnect()
  },
  // reset-offsets refuses a group with live members, and the lag of a stopped group is the one documented
  'groups list --json': stopFulfilment,
}

const commands = documentedCommands()

describe('docs/cli.md', () => {
  it('the shape check itself tells a number from a numeric string, and a missing or extra key', () => {
    const doc = { offset: 1, 'key?': 'k', headers: { '<name>': 'v' }, rows: [{ n: 1 }] }
    expect(shapeErrors(doc, { offset: 2, key: null, headers: { a: 'x' }, rows: [{ n: 2 }] })).toEqual([])
    expect(shapeErrors(doc, { offset: '2', headers: { a: 1 }, rows: [{ n: 2 }, { n: 3, m: 4 }], extra: true })).toEqual([
      '$.offset: documented number, got string "2"',
      '$.headers.a: documented string, got number 1',
      '$.rows[1].m: not documented',
      '$.extra: not documented',
    ])
    expect(shapeErrors(doc, { key: 'k', headers: {}, rows: [] })).toEqual(['$.offset: documented, but missing'])
  })

  it('documents every command that takes --json', () => {
    const documented = commands.map((c) => c.args.join(' '))
    const missing = COMMANDS.filter((c) => 'json' in c.options).filter((c) => !documented.some((d) => d === c.name || d.startsWith(`${c.name} `)))
    expect(missing.map((c) => c.name)).toEqual([])
    for (const key of Object.keys(PREPARE)) expect(documented, `PREPARE names a command the page no longer has`).toContain(key)
  })

  for (const c of commands) {
    const line = c.args.join(' ')
    // migrate-transport needs a Kafka broker: checked where one is given (KAFKA_BROKERS), as in a dev run beside the
    // contract suite's broker; its copy and offsets are tested in test/integration/migrate/
    const needsKafka = c.args[0] === 'migrate-transport' && !process.env.KAFKA_BROKERS
    it.skipIf(needsKafka)(`${line}: prints the documented shape`, { timeout: 60_000 }, async () => {
      await PREPARE[line]?.()
      const { code, stdout, stderr } = await cli(c.args, c.stdin)
      expect(code, stderr).toBe(0)
      const outputs = c.jsonLines
        ? stdout
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l))
        : [JSON.parse(stdout)]
      expect(outputs.length, stdout).toBeGreaterThan(0)
      expect(
        outputs.flatMap((o) => shapeErrors(c.examples[0], o)),
        stdout,
      ).toEqual([])
    })
  }
})
