// `migrate-transport`: pgQueue -> Kafka (--to kafka) or Kafka -> pgQueue (--to pgqueue); see docs/moving-to-kafka.md.
import type { Kafka as KafkaJSKafka } from 'kafkajs'
import kafkajs from '../../kafkajs/upstream.js'
import { logLevel } from '../../kafkajs/logger.js'
import { migrateTransport, openEndpoint, progressBar, type Endpoint, type MigrationReport } from '../../migrate/index.js'
import { CONNECTION_OPTIONS, JSON_OPTION, UsageError, flag, list, positionals, str, type Command } from '../args.js'
import { CLIENT_ID, cliKafka, stderrLogCreator } from '../connect.js'
import { table, writeJson } from '../format.js'

const DEFAULT_STATE = 'migrate-transport.state.json'

function printReport(out: NodeJS.WritableStream, r: MigrationReport): void {
  out.write(
    table(
      ['topic', 'partitions', 'configs', 'destination', r.dryRun ? 'to_copy' : 'copied', 'groups'],
      r.topics.map((t) => [
        t.topic,
        t.partitions,
        t.configEntries.map((c) => `${c.name}=${c.value}`).join(',') || null,
        t.created ? 'create' : 'exists',
        t.messages,
        t.groups.length,
      ]),
    ),
  )
  const offsets = r.topics.flatMap((t) =>
    t.groups.flatMap((g) => g.partitions.map((p) => [t.topic, g.groupId, p.partition, Number(p.source), Number(p.destination)])),
  )
  if (offsets.length > 0)
    out.write(`\n${table(['topic', 'group', 'partition', 'source_offset', r.dryRun ? 'destination_offset_planned' : 'destination_offset'], offsets)}`)
  if (r.verification) {
    const bad = [...r.verification.partitions, ...r.verification.groups].filter((c) => !c.ok)
    out.write(
      `\nVerification: ${r.verification.partitions.length} partitions (count and checksum), ${r.verification.groups.length} group offsets: ${bad.length === 0 ? 'all match' : `${bad.length} DIFFER`}\n`,
    )
    for (const c of bad) out.write(`  differs: ${JSON.stringify(c)}\n`)
  }
  if (!r.dryRun) out.write(`\nCopied ${r.messages} messages in ${r.seconds.toFixed(1)} s (${r.messagesPerSecond}/s)\n`)
}

export const migrateTransportCommand: Command = {
  name: 'migrate-transport',
  summary: 'copy topics, retained messages and group offsets between pgQueue and Kafka (either way)',
  args: '<topic>... --to kafka|pgqueue [options]',
  description:
    'Copies each topic (partition count, explicit configs), its retained messages (key, value, headers, timestamp, same partition) and every\n' +
    "group's committed offsets, translated to the destination's offsets. Resumable: progress is kept in the --state file, and a second run\n" +
    'copies what was produced since (the tail of a live cut-over) and rewrites the offsets. Ends with a verification: per partition count\n' +
    'and checksum of the destination against the source, and every group offset. Stop the consumers first (docs/moving-to-kafka.md).',
  options: {
    ...CONNECTION_OPTIONS,
    ...JSON_OPTION,
    to: { type: 'string', value: 'kafka|pgqueue', help: 'destination: kafka (from pgQueue) or pgqueue (from Kafka)' },
    brokers: { type: 'string', value: 'host:port,…', help: 'Kafka brokers (default: KAFKA_BROKERS)' },
    state: { type: 'string', value: 'file', help: `progress of this migration, for resuming (default: ${DEFAULT_STATE})` },
    group: { type: 'string', multiple: true, value: 'id', help: "only this group's offsets (default: every group with offsets on the topic)" },
    'dry-run': { type: 'boolean', help: 'plan only: what would be created, copied and translated; nothing is written' },
    'skip-verify': { type: 'boolean', help: 'do not re-read the destination afterwards' },
  },
  examples: [
    'kafkajs-pgqueue migrate-transport orders payments --to kafka --brokers kafka1:9092 --dry-run',
    'kafkajs-pgqueue migrate-transport orders --to kafka --brokers kafka1:9092 --state orders.migration.json',
    'kafkajs-pgqueue migrate-transport orders --to pgqueue --brokers kafka1:9092 --url postgres://db/app',
  ],
  async run(p, io) {
    const topics = positionals(p, ['topic'], { rest: true })
    const to = str(p, 'to')
    if (to !== 'kafka' && to !== 'pgqueue') throw new UsageError('--to must be kafka or pgqueue')
    const brokers = (str(p, 'brokers') ?? process.env.KAFKA_BROKERS ?? '')
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean)
    if (brokers.length === 0) throw new UsageError('no Kafka brokers: pass --brokers or set KAFKA_BROKERS')
    const pgqueue = cliKafka(p, io)
    const kafka: KafkaJSKafka = new kafkajs.Kafka({
      clientId: CLIENT_ID,
      brokers,
      logLevel: flag(p, 'verbose') ? logLevel.INFO : logLevel.ERROR,
      logCreator: stderrLogCreator(io.stderr),
    })
    const opened: Endpoint[] = []
    try {
      const pgEnd = await openEndpoint('pgqueue', pgqueue)
      opened.push(pgEnd)
      const kafkaEnd = await openEndpoint('kafka', kafka)
      opened.push(kafkaEnd)
      const report = await migrateTransport({
        from: to === 'kafka' ? pgEnd : kafkaEnd,
        to: to === 'kafka' ? kafkaEnd : pgEnd,
        topics,
        stateFile: str(p, 'state') ?? DEFAULT_STATE,
        dryRun: flag(p, 'dry-run'),
        verify: !flag(p, 'skip-verify'),
        groups: list(p, 'group'),
        progress: progressBar(io.stderr),
      })
      if (flag(p, 'json')) writeJson(io.stdout, report)
      else printReport(io.stdout, report)
      return report.verification && !report.verification.ok ? 1 : 0
    } finally {
      for (const e of opened.reverse()) await e.admin.disconnect()
    }
  },
}
