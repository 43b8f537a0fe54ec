import kafkajs from '../../kafkajs/upstream.js'
import { consumerLag, resetOffsets, type GroupLag } from '../../ops/lag.js'
import { CONNECTION_OPTIONS, JSON_OPTION, UsageError, flag, int, positionals, str, type Command } from '../args.js'
import { withKafka } from '../connect.js'
import { isoTime, table, writeJson, type Cell } from '../format.js'

const COMMON = { ...CONNECTION_OPTIONS, ...JSON_OPTION }

function lagTable(groups: GroupLag[], detailed: boolean): string {
  if (!detailed) {
    const rows: Cell[][] = groups.flatMap((g) =>
      g.topics.map((t) => [g.group, t.topic, t.partitionCount, Number(t.totalLag), Number(t.maxLag), t.stuckAhead]),
    )
    return table(['group', 'topic', 'partitions', 'lag', 'max_lag', 'stuck_ahead'], rows)
  }
  const rows: Cell[][] = groups.flatMap((g) =>
    g.topics.flatMap((t) =>
      (t.partitions ?? []).map((x) => [
        g.group,
        t.topic,
        x.partition,
        Number(x.offset),
        Number(x.high),
        Number(x.lag),
        x.metadata ?? 'OK',
        isoTime(x.committedAt),
      ]),
    ),
  )
  return table(['group', 'topic', 'partition', 'offset', 'high', 'lag', 'status', 'committed_at'], rows)
}

const list: Command = {
  name: 'groups list',
  summary: 'list consumer groups with their state and live members',
  options: COMMON,
  async run(p, io) {
    positionals(p, [])
    const groups = await withKafka(p, io, async ({ admin }) => {
      const ids = (await admin.listGroups()).groups.map((g) => g.groupId)
      const described = ids.length > 0 ? (await admin.describeGroups(ids)).groups : []
      return described.map((g) => ({ group: g.groupId, state: g.state, members: g.members.length }))
    })
    if (flag(p, 'json')) return writeJson(io.stdout, groups)
    io.stdout.write(
      table(
        ['group', 'state', 'members'],
        groups.map((g) => [g.group, g.state, g.members]),
      ),
    )
  },
}

const describe: Command = {
  name: 'groups describe',
  summary: "show a group's live members, their partitions and the group's lag",
  args: '<group> [options]',
  options: COMMON,
  async run(p, io) {
    const [group] = positionals(p, ['group'])
    const result = await withKafka(p, io, async ({ admin, ctx }) => {
      const [d] = (await admin.describeGroups([group!])).groups
      const members = d!.members.map((m) => {
        const decoded = kafkajs.AssignerProtocol.MemberAssignment.decode(m.memberAssignment)
        const assignment: Record<string, number[]> = decoded?.assignment ?? {}
        return { memberId: m.memberId, clientId: m.clientId, clientHost: m.clientHost, assignment }
      })
      const [lag] = await consumerLag(ctx, { group, detailed: true })
      return { group, state: d!.state, members, topics: lag?.topics ?? [] }
    })
    if (result.state === 'Dead') {
      io.stderr.write(`Unknown group "${group}"\n`)
      return 1
    }
    if (flag(p, 'json')) return writeJson(io.stdout, result)
    io.stdout.write(`Group ${result.group}: ${result.state}, ${result.members.length} live member(s)\n\n`)
    if (result.members.length > 0) {
      const rows = result.members.map((m) => [
        m.memberId,
        m.clientHost,
        Object.entries(m.assignment)
          .map(([t, ps]) => `${t}:${ps.join(',')}`)
          .join(' ') || '-',
      ])
      io.stdout.write(`${table(['member', 'host', 'partitions'], rows)}\n`)
    }
    io.stdout.write(lagTable([{ group: result.group, topics: result.topics }], true))
  },
}

const lag: Command = {
  name: 'groups lag',
  summary: 'consumer lag per group and topic (per partition with --detailed); flags STUCK_AHEAD offsets',
  options: {
    ...COMMON,
    group: { type: 'string', short: 'g', value: 'group', help: 'only this group' },
    topic: { type: 'string', short: 't', value: 'topic', help: 'only this topic' },
    detailed: { type: 'boolean', short: 'd', help: 'one row per partition' },
  },
  examples: ['kafkajs-pgqueue groups lag --group my-service --detailed', 'kafkajs-pgqueue groups lag --json | jq .'],
  async run(p, io) {
    positionals(p, [])
    const detailed = flag(p, 'detailed')
    const groups = await withKafka(p, io, ({ ctx }) => consumerLag(ctx, { group: str(p, 'group'), topic: str(p, 'topic'), detailed }))
    if (flag(p, 'json')) return writeJson(io.stdout, groups)
    io.stdout.write(lagTable(groups, detailed))
  },
}

const reset: Command = {
  name: 'groups reset-offsets',
  summary: 'move committed offsets to the high watermark: a dry run unless --execute (STUCK_AHEAD ones by default)',
  description:
    'Sets committed offsets to the high watermark (the log end), epoch 0. By default only STUCK_AHEAD offsets (past the\n' +
    'log end) are touched; --all-partitions resets every offset of the group on the topic, including partitions it\n' +
    'never committed. As kafka-consumer-groups does, it only shows what would change unless --execute is given, needs\n' +
    '--group or --all-groups, and refuses a group that has live members (stop its consumers first).',
  options: {
    ...COMMON,
    group: { type: 'string', short: 'g', value: 'group', help: 'this group' },
    'all-groups': { type: 'boolean', help: 'every group (instead of --group)' },
    topic: { type: 'string', short: 't', value: 'topic', help: 'only this topic' },
    partition: { type: 'string', value: 'n', help: 'only this partition (needs --topic)' },
    'all-partitions': { type: 'boolean', help: 'not only STUCK_AHEAD offsets (needs --group and --topic)' },
    'dry-run': { type: 'boolean', help: 'show what would be reset, change nothing (the default)' },
    execute: { type: 'boolean', help: 'apply the reset' },
  },
  examples: [
    'kafkajs-pgqueue groups reset-offsets --all-groups',
    'kafkajs-pgqueue groups reset-offsets --group my-service --topic orders --all-partitions --execute',
  ],
  async run(p, io) {
    positionals(p, [])
    const group = str(p, 'group')
    const topic = str(p, 'topic')
    const partition = int(p, 'partition', { min: 0 })
    const all = flag(p, 'all-partitions')
    const execute = flag(p, 'execute')
    if (partition !== undefined && topic === undefined) throw new UsageError('--partition needs --topic')
    if (all && (group === undefined || topic === undefined)) throw new UsageError('--all-partitions needs --group and --topic')
    if (execute && flag(p, 'dry-run')) throw new UsageError('--dry-run and --execute exclude each other')
    if (group !== undefined && flag(p, 'all-groups')) throw new UsageError('--group and --all-groups exclude each other')
    if (group === undefined && !flag(p, 'all-groups')) throw new UsageError('name a group with --group, or pass --all-groups')
    const req = { group, topic, partition, onlyStuckAhead: !all }
    const outcome = await withKafka(p, io, async ({ admin, ctx }) => {
      const preview = await resetOffsets(ctx, { ...req, dryRun: true })
      const groups = [...new Set(preview.resets.map((r) => r.group))]
      const described = groups.length > 0 ? (await admin.describeGroups(groups)).groups : []
      const running = described.filter((g) => g.members.length > 0)
      if (running.length > 0) return { running }
      return { result: execute ? await resetOffsets(ctx, req) : preview }
    })
    if ('running' in outcome) {
      const names = outcome.running!.map((g) => `"${g.groupId}" (${g.state}, ${g.members.length} live member(s))`).join(', ')
      io.stderr.write(`Refusing to reset offsets of running group(s) ${names}: stop their consumers first\n`)
      return 1
    }
    const result = outcome.result!
    if (flag(p, 'json')) return writeJson(io.stdout, { ...result, dryRun: !execute })
    if (result.partitionsUpdated === 0) return void io.stdout.write('Nothing to reset\n')
    const rows = result.resets.map((r) => [
      r.group,
      r.topic,
      r.partition,
      r.previousOffset === null ? null : Number(r.previousOffset),
      Number(r.newOffset),
    ])
    io.stdout.write(table(['group', 'topic', 'partition', 'previous', 'new'], rows))
    if (execute) io.stderr.write(`Reset ${result.partitionsUpdated} offset(s)\n`)
    else io.stderr.write(`Dry run: ${result.partitionsUpdated} offset(s) would be reset; run again with --execute to apply\n`)
  },
}

export const groupCommands = [list, describe, lag, reset]
