import { createInterface } from 'node:readline'
import type { Message } from 'kafkajs'
import { CONNECTION_OPTIONS, JSON_OPTION, flag, int, pairs, positionals, str, type Command } from '../args.js'
import { withKafka } from '../connect.js'
import { progress, writeJson } from '../format.js'

/** A line that should carry a key but has no separator; reported with its line number (exit 1). */
class InputError extends Error {}

export const produceCommand: Command = {
  name: 'produce',
  summary: 'send each line of stdin as a message',
  args: '<topic> [options]',
  description: 'Sends each line of stdin as one message (in batches). The topic must exist.',
  options: {
    ...CONNECTION_OPTIONS,
    ...JSON_OPTION,
    'key-separator': { type: 'string', short: 'k', value: 'sep', help: 'split each line into key<sep>value (a line without it is an error)' },
    partition: { type: 'string', short: 'p', value: 'n', help: 'send every message to this partition (default: by key, round robin without)' },
    priority: { type: 'string', value: '0-9', help: 'pgQueue priority of every message (default 5)' },
    header: { type: 'string', short: 'H', multiple: true, value: 'key=value', help: 'header added to every message' },
    'batch-size': { type: 'string', value: 'n', help: 'messages per send (default 500)' },
  },
  examples: [
    "printf 'a\\nb\\n' | kafkajs-pgqueue produce orders",
    "printf 'k1:v1\\nk2:v2\\n' | kafkajs-pgqueue produce orders --key-separator : --header source=cli",
  ],
  async run(p, io) {
    const [topic] = positionals(p, ['topic'])
    const separator = str(p, 'key-separator')
    const partition = int(p, 'partition', { min: 0 })
    const priority = int(p, 'priority', { min: 0, max: 9 })
    const batchSize = int(p, 'batch-size', { min: 1 }) ?? 500
    const headers = pairs(p, 'header').length > 0 ? Object.fromEntries(pairs(p, 'header')) : undefined
    const toMessage = (line: string, n: number): Message => {
      const message: Message & { priority?: number } = { value: line }
      if (separator !== undefined && separator !== '') {
        const at = line.indexOf(separator)
        if (at < 0) throw new InputError(`line ${n}: no key separator "${separator}"`)
        message.key = line.slice(0, at)
        message.value = line.slice(at + separator.length)
      }
      if (partition !== undefined) message.partition = partition
      if (priority !== undefined) message.priority = priority
      if (headers) message.headers = headers
      return message
    }

    let sent = 0
    try {
      await withKafka(p, io, async ({ kafka, admin }) => {
        if (!(await admin.listTopics()).includes(topic!)) throw new InputError(`Unknown topic "${topic}" (create it with: topics create ${topic})`)
        const producer = kafka.producer({ allowAutoTopicCreation: false })
        await producer.connect()
        const shown = progress(io.stderr)
        try {
          let batch: Message[] = []
          const flush = async () => {
            if (batch.length === 0) return
            await producer.send({ topic: topic!, messages: batch })
            sent += batch.length
            batch = []
            shown.update(`${sent} messages sent…`)
          }
          let n = 0
          for await (const line of createInterface({ input: io.stdin, crlfDelay: Infinity })) {
            batch.push(toMessage(line, ++n))
            if (batch.length >= batchSize) await flush()
          }
          await flush()
        } finally {
          shown.done()
          await producer.disconnect()
        }
      })
    } catch (err) {
      if (!(err instanceof InputError)) throw err
      io.stderr.write(`${err.message}${sent > 0 ? ` (${sent} messages were sent before)` : ''}\n`)
      return 1
    }
    if (flag(p, 'json')) writeJson(io.stdout, { topic, messages: sent })
    else io.stderr.write(`Produced ${sent} message(s) to ${topic}\n`)
  },
}
