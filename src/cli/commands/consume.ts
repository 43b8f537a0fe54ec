import type { KafkaMessage } from 'kafkajs'
import { CONNECTION_OPTIONS, JSON_OPTION, UsageError, flag, int, positionals, str, type Command } from '../args.js'
import { withKafka } from '../connect.js'
import { toJson } from '../format.js'

const text = (b: Buffer | null | undefined) => (b === null || b === undefined ? null : b.toString('utf8'))

function jsonLine(topic: string, partition: number, m: KafkaMessage): string {
  const headers = Object.fromEntries(
    Object.entries(m.headers ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v.map((x) => String(x)) : text(v as Buffer | undefined)]),
  )
  return toJson({ topic, partition, offset: m.offset, timestamp: m.timestamp, key: text(m.key), value: text(m.value), headers })
}

export const consumeCommand: Command = {
  name: 'consume',
  summary: 'print messages of a topic, one per line, as a consumer group',
  args: '<topic> --group <group> [options]',
  description:
    'Consumes a topic as a member of --group and prints each message value on its own line (JSON lines with --json).\n' +
    'Offsets are committed for printed messages only, so a later run continues where this one stopped. Ctrl-C stops.',
  options: {
    ...CONNECTION_OPTIONS,
    ...JSON_OPTION,
    group: { type: 'string', short: 'g', value: 'group', help: 'consumer group (required)' },
    'from-beginning': { type: 'boolean', help: 'a group without offsets starts at the oldest message, not the newest' },
    'max-messages': { type: 'string', short: 'n', value: 'n', help: 'exit after this many messages' },
    'timeout-ms': { type: 'string', value: 'ms', help: 'exit when no message arrived for this long' },
    'print-key': { type: 'boolean', help: 'print key<separator>value' },
    'key-separator': { type: 'string', value: 'sep', help: 'separator for --print-key (default: tab)' },
  },
  examples: ['kafkajs-pgqueue consume orders --group audit --from-beginning --max-messages 10'],
  async run(p, io) {
    const [topic] = positionals(p, ['topic'])
    const groupId = str(p, 'group')
    if (!groupId) throw new UsageError('--group is required')
    const max = int(p, 'max-messages', { min: 1 })
    const timeoutMs = int(p, 'timeout-ms', { min: 1 })
    const separator = str(p, 'key-separator') ?? '\t'
    const format = (partition: number, m: KafkaMessage) =>
      flag(p, 'json')
        ? jsonLine(topic!, partition, m)
        : `${flag(p, 'print-key') ? `${text(m.key) ?? 'null'}${separator}` : ''}${text(m.value) ?? 'null'}`

    let count = 0
    let failure: Error | undefined
    await withKafka(p, io, async ({ kafka, admin }) => {
      if (!(await admin.listTopics()).includes(topic!)) throw new Error(`Unknown topic "${topic}"`)
      const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false })
      let finish!: () => void
      const finished = new Promise<void>((resolve) => (finish = resolve))
      let idle: NodeJS.Timeout | undefined
      const armIdle = () => {
        if (timeoutMs === undefined) return
        clearTimeout(idle)
        idle = setTimeout(finish, timeoutMs)
      }
      let done = false
      void finished.then(() => (done = true))
      consumer.on(consumer.events.CRASH, (e) => {
        if (e.payload.restart) return
        failure = e.payload.error
        finish()
      })
      process.once('SIGINT', finish)
      process.once('SIGTERM', finish)
      await consumer.connect()
      try {
        await consumer.subscribe({ topic: topic!, fromBeginning: flag(p, 'from-beginning') })
        await consumer.run({
          eachBatchAutoResolve: false,
          // only printed messages are resolved, so the commit never covers a message this run did not print
          eachBatch: async ({ batch, resolveOffset, isRunning, isStale, heartbeat }) => {
            for (const message of batch.messages) {
              if (done || !isRunning() || isStale()) break
              io.stdout.write(`${format(batch.partition, message)}\n`)
              resolveOffset(message.offset)
              armIdle()
              count++
              if (max !== undefined && count >= max) {
                done = true
                finish()
              }
            }
            await heartbeat()
          },
        })
        armIdle()
        await finished
      } finally {
        clearTimeout(idle)
        process.off('SIGINT', finish)
        process.off('SIGTERM', finish)
        await consumer.disconnect()
      }
    })
    if (failure) throw failure
    io.stderr.write(`Consumed ${count} message(s)\n`)
  },
}
