import { readFailingMessages } from '../../deadLetter/attempts.js'
import { readDeadLetters, replayDeadLetters, type DeadLetterEntry } from '../../deadLetter/browse.js'
import { CONNECTION_OPTIONS, JSON_OPTION, UsageError, flag, int, list, positionals, str, type Command } from '../args.js'
import { withKafka } from '../connect.js'
import { table, writeJson } from '../format.js'

const text = (b: Buffer | null) => (b === null ? null : b.toString('utf8'))

function summary(e: DeadLetterEntry) {
  const o = e.origin
  return {
    partition: e.partition,
    offset: e.offset,
    key: text(e.key),
    origin: o ? { topic: o.topic, partition: o.partition, offset: o.offset, group: o.group } : null,
    attempts: o?.attempts ?? null,
    error: o ? `${o.errorClass}: ${o.errorMessage}` : null,
  }
}

const listCommand: Command = {
  name: 'dead-letters list',
  summary: 'show the messages of a dead-letter topic: origin, attempts, error',
  args: '<topic> [options]',
  options: { ...CONNECTION_OPTIONS, ...JSON_OPTION, limit: { type: 'string', value: 'n', help: 'at most n entries (default 1000)' } },
  examples: ['kafkajs-pgqueue dead-letters list orders.dlq'],
  async run(p, io) {
    const [topic] = positionals(p, ['topic'])
    const limit = int(p, 'limit', { min: 1 }) ?? 1000
    const entries = await withKafka(p, io, ({ kafka }) => readDeadLetters(kafka, topic!, { limit }))
    const rows = entries.map(summary)
    if (flag(p, 'json')) return writeJson(io.stdout, rows)
    io.stdout.write(
      table(
        ['partition', 'offset', 'key', 'from', 'group', 'attempts', 'error'],
        rows.map((r) => [
          r.partition,
          r.offset,
          r.key,
          r.origin ? `${r.origin.topic}/${r.origin.partition}@${r.origin.offset}` : null,
          r.origin?.group,
          r.attempts,
          r.error,
        ]),
      ),
    )
  },
}

const replayCommand: Command = {
  name: 'dead-letters replay',
  summary: 'send dead-lettered messages back to the partition they came from',
  args: '<topic> (--offset <partition>:<offset>... | --all) [options]',
  options: {
    ...CONNECTION_OPTIONS,
    ...JSON_OPTION,
    offset: { type: 'string', multiple: true, value: 'p:o', help: 'the dead-letter entry at this partition and offset (repeatable)' },
    all: { type: 'boolean', help: 'every entry of the topic' },
  },
  examples: ['kafkajs-pgqueue dead-letters replay orders.dlq --offset 0:12 --offset 0:15', 'kafkajs-pgqueue dead-letters replay orders.dlq --all'],
  async run(p, io) {
    const [topic] = positionals(p, ['topic'])
    const picked = list(p, 'offset').map((raw) => {
      const m = /^(\d+):(\d+)$/.exec(raw)
      if (!m) throw new UsageError(`--offset takes <partition>:<offset>, got "${raw}"`)
      return { partition: Number(m[1]), offset: BigInt(m[2]!).toString() }
    })
    if (flag(p, 'all') === picked.length > 0) throw new UsageError('give either --all or one or more --offset <partition>:<offset>')
    const key = (e: { partition: number; offset: string }) => `${e.partition}:${e.offset}`
    const wanted = picked.map(key)
    const result = await withKafka(p, io, async ({ kafka }) => {
      // only the span of each partition's picked offsets is read, not the whole topic
      const ranges = flag(p, 'all') ? undefined : picked.map((x) => ({ partition: x.partition, from: x.offset, to: x.offset }))
      const entries = await readDeadLetters(kafka, topic!, { limit: Number.MAX_SAFE_INTEGER, ranges })
      const chosen = flag(p, 'all') ? entries : entries.filter((e) => wanted.includes(key(e)))
      const missing = wanted.filter((k) => !chosen.some((e) => key(e) === k))
      if (missing.length > 0) return { replayed: 0, missing }
      return { replayed: await replayDeadLetters(kafka, chosen), missing }
    })
    if (flag(p, 'json')) writeJson(io.stdout, result)
    else if (result.missing.length > 0) io.stderr.write(`No dead-letter entry at ${result.missing.join(', ')} in "${topic}"; nothing replayed\n`)
    else io.stdout.write(`Replayed ${result.replayed} message(s) from "${topic}"\n`)
    return result.missing.length > 0 ? 1 : 0
  },
}

const retryingCommand: Command = {
  name: 'dead-letters retrying',
  summary: 'show the messages failing now (retried in place, not yet dead-lettered): attempts and last error',
  args: '[options]',
  options: {
    ...CONNECTION_OPTIONS,
    ...JSON_OPTION,
    group: { type: 'string', value: 'id', help: 'only this consumer group' },
    topic: { type: 'string', value: 'name', help: 'only this (original) topic' },
    limit: { type: 'string', value: 'n', help: 'at most n entries (default 1000)' },
  },
  examples: ['kafkajs-pgqueue dead-letters retrying --group orders-service'],
  async run(p, io) {
    positionals(p, [])
    const filter = { group: str(p, 'group'), topic: str(p, 'topic'), limit: int(p, 'limit', { min: 1 }) ?? 1000 }
    const rows = await withKafka(p, io, ({ kafka }) => readFailingMessages(kafka, filter))
    // epoch ms, as every timestamp in --json (docs/cli.md)
    if (flag(p, 'json'))
      return writeJson(
        io.stdout,
        rows.map((r) => ({ ...r, updatedAt: r.updatedAt.getTime() })),
      )
    io.stdout.write(
      table(
        ['group', 'topic', 'partition', 'offset', 'attempts', 'last error', 'since'],
        rows.map((r) => [r.group, r.topic, r.partition, r.offset, r.attempts, r.lastError, r.updatedAt.toISOString()]),
      ),
    )
  },
}

export const deadLetterCommands: Command[] = [listCommand, replayCommand, retryingCommand]
