import type { ITopicConfig } from 'kafkajs'
import { CONNECTION_OPTIONS, JSON_OPTION, flag, int, pairs, positionals, type Command } from '../args.js'
import { withKafka } from '../connect.js'
import { table, writeJson } from '../format.js'

const COMMON = { ...CONNECTION_OPTIONS, ...JSON_OPTION }

const list: Command = {
  name: 'topics list',
  summary: 'list topics with their partition counts and retention',
  options: COMMON,
  async run(p, io) {
    positionals(p, [])
    const rows = await withKafka(p, io, ({ ctx }) => ctx.store.topics.listTopics())
    if (flag(p, 'json')) return writeJson(io.stdout, rows)
    io.stdout.write(
      table(
        ['topic', 'partitions', 'retention_s', 'max_rows', 'max_bytes', 'aggressive'],
        rows.map((r) => [
          r.name,
          r.partitionCount,
          r.retentionMaxAgeSeconds,
          Number(r.maxRowsPerTopic),
          Number(r.maxTotalPayloadBytes),
          r.aggressiveRetention,
        ]),
      ),
    )
  },
}

const create: Command = {
  name: 'topics create',
  summary: 'create topics',
  args: '<topic>... [options]',
  options: {
    ...COMMON,
    partitions: { type: 'string', short: 'p', value: 'n', help: 'partition count (default: DATAHUB_PGQUEUE_TOPIC_DEFAULT_PARTITION_COUNT)' },
    config: { type: 'string', short: 'c', multiple: true, value: 'key=value', help: 'topic config entry, e.g. retention.ms=86400000' },
    'if-not-exists': { type: 'boolean', help: 'succeed when a topic already exists' },
  },
  examples: ['kafkajs-pgqueue topics create orders --partitions 4 --config retention.ms=86400000'],
  async run(p, io) {
    const names = positionals(p, ['topic'], { rest: true })
    const numPartitions = int(p, 'partitions', { min: 1, max: 4096 })
    const configEntries = pairs(p, 'config').map(([name, value]) => ({ name, value }))
    const topics: ITopicConfig[] = names.map((topic) => ({ topic, numPartitions, configEntries }))
    const created = await withKafka(p, io, async ({ admin }) => {
      const existing = new Set(await admin.listTopics())
      await admin.createTopics({ topics })
      return names.map((topic) => ({ topic, created: !existing.has(topic) }))
    })
    if (flag(p, 'json')) writeJson(io.stdout, created)
    else for (const c of created) io.stdout.write(`${c.created ? 'Created' : 'Already exists:'} ${c.topic}\n`)
    return created.some((c) => !c.created) && !flag(p, 'if-not-exists') ? 1 : 0
  },
}

const describe: Command = {
  name: 'topics describe',
  summary: "show a topic's settings and per-partition watermarks",
  args: '<topic> [options]',
  options: COMMON,
  async run(p, io) {
    const [name] = positionals(p, ['topic'])
    const result = await withKafka(p, io, async ({ admin, ctx }) => {
      const row = (await ctx.store.topics.listTopics()).find((r) => r.name === name)
      if (!row) return undefined
      const partitions = (await admin.fetchTopicOffsets(name!)).map(({ partition, low, high }) => ({
        partition,
        low,
        high,
        messages: (BigInt(high) - BigInt(low)).toString(),
      }))
      return { ...row, partitions }
    })
    if (!result) {
      io.stderr.write(`Unknown topic "${name}"\n`)
      return 1
    }
    if (flag(p, 'json')) return writeJson(io.stdout, result)
    const { partitions, config, ...settings } = result
    io.stdout.write(
      table(
        ['setting', 'value'],
        [...Object.entries(settings), ...Object.entries(config).map(([k, v]) => [`config ${k}`, v])].map(([k, v]) => [k, String(v)]),
      ),
    )
    io.stdout.write(
      `\n${table(
        ['partition', 'low', 'high', 'messages'],
        partitions.map((x) => [x.partition, Number(x.low), Number(x.high), Number(x.messages)]),
      )}`,
    )
  },
}

const remove: Command = {
  name: 'topics delete',
  summary: 'delete topics with their messages and offsets',
  args: '<topic>... [options]',
  options: COMMON,
  async run(p, io) {
    const names = positionals(p, ['topic'], { rest: true })
    const missing = await withKafka(p, io, async ({ admin }) => {
      const existing = new Set(await admin.listTopics())
      const unknown = names.filter((n) => !existing.has(n))
      const known = names.filter((n) => existing.has(n))
      if (known.length > 0) await admin.deleteTopics({ topics: known })
      return unknown
    })
    const deleted = names.filter((n) => !missing.includes(n))
    if (flag(p, 'json')) writeJson(io.stdout, { deleted, unknown: missing })
    else {
      for (const n of deleted) io.stdout.write(`Deleted ${n}\n`)
      for (const n of missing) io.stderr.write(`Unknown topic "${n}"\n`)
    }
    return missing.length > 0 ? 1 : 0
  },
}

export const topicCommands = [list, create, describe, remove]
