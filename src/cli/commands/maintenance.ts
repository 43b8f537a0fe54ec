import { runMaintenance, type CompletedMaintenance } from '../../maintenance/run.js'
import { CONNECTION_OPTIONS, JSON_OPTION, flag, int, positionals, type Command } from '../args.js'
import { withKafka } from '../connect.js'
import { table, writeJson } from '../format.js'

function summary(r: CompletedMaintenance): string {
  const rows: Array<[string, string | number]> = [
    ['duration_ms', r.durationMs],
    ['partitions_created', r.partitionsCreated],
    ['outbox_numbered', r.outboxNumbered],
    ['partitions_dropped', r.partitions.dropped.length],
    ['deleted_age', r.deleted.age],
    ['deleted_row_cap', r.deleted.rowCap],
    ['deleted_byte_cap', r.deleted.byteCap],
    ['deleted_aggressive', r.deleted.aggressive],
    ['aggressive_blocked', r.aggressiveBlocked.length],
    ['compacted', r.compaction.deleted],
    ['leases_swept', r.leasesSwept],
    ['offsets_advanced', r.offsetsAdvanced],
    ['attempts_swept', r.attemptsSwept],
    ['registrations_expired', r.expired.registrations.length],
    ['members_expired', r.expired.members],
    ['truncated', r.truncated.join(' ') || 0],
    ['errors', r.errors.length],
  ]
  let out = table(['step', 'result'], rows)
  if (r.errors.length > 0) {
    out += `\n${table(
      ['failed_step', 'topic', 'error'],
      r.errors.map((e) => [e.step, e.topic ?? '', e.message]),
    )}`
  }
  return out
}

const run: Command = {
  name: 'maintenance run',
  summary: 'run retention and housekeeping once (skipped when another runner holds the lock)',
  description:
    'Runs maintenance once: premake partitions, drop expired partitions, age / row / byte / aggressive retention,\n' +
    'log compaction of cleanup.policy=compact topics,\n' +
    'sweep orphaned leases and delivery attempts, expire silent registrations, VACUUM. Exit code 1 when a step failed.',
  options: {
    ...CONNECTION_OPTIONS,
    ...JSON_OPTION,
    'batch-size': { type: 'string', value: 'n', help: 'rows per DELETE (default: DATAHUB_PGQUEUE_MAINTENANCE_BATCH_DELETE_LIMIT)' },
    'no-vacuum': { type: 'boolean', help: 'skip VACUUM after deleting' },
  },
  async run(p, io) {
    positionals(p, [])
    const batchDeleteLimit = int(p, 'batch-size', { min: 1 })
    io.stderr.write('Running maintenance…\n')
    const report = await withKafka(p, io, ({ ctx }) => runMaintenance(ctx, { batchDeleteLimit, vacuum: !flag(p, 'no-vacuum') }))
    if (flag(p, 'json')) writeJson(io.stdout, report)
    if (report.skipped) {
      io.stderr.write('Skipped: another maintenance runner holds the lock\n')
      return 0
    }
    if (!flag(p, 'json')) io.stdout.write(summary(report))
    return report.errors.length > 0 ? 1 : 0
  },
}

export const maintenanceCommands = [run]
