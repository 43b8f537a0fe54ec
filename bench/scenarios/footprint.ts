// footprint: a consumer process (eachMessage) drains a large topic; its peak RSS, the tables' and indexes' sizes
// afterwards, and the rows the drain churned (dead tuples) per consumed message.
import fs from 'node:fs'
import path from 'node:path'
import { churn, messageIndexSizes, relationSizes } from '../lib/pgstats.js'
import { prefill } from '../lib/produce.js'
import { createTopic, highWatermarks } from '../lib/target.js'
import type { Row, RunContext } from '../lib/types.js'
import { runMembers } from '../lib/workers.js'

const MB = 2 ** 20

export async function footprintScenario(ctx: RunContext): Promise<Row[]> {
  const topic = `bench-footprint-${ctx.runId}`
  const total = ctx.sizes.footprint
  await createTopic(ctx.target, topic, 1)
  await prefill(ctx.target, topic, total)
  const ends = await highWatermarks(ctx.target, topic)
  const before = ctx.pg ? await churn(ctx.pg.pool, ctx.pg.schema) : undefined
  const member = {
    target: ctx.target,
    topic,
    groupId: `bench-footprint-${ctx.runId}`,
    mode: 'eachMessage' as const,
    latency: false,
    gated: true,
    maxWaitTimeInMs: 100,
  }
  const [g] = await runMembers([member], topic, 1, ends, { drainTimeoutMs: 1_800_000 })
  const rssMB = g!.rssPeak / MB
  ctx.log(`footprint: consumer peak RSS ${rssMB.toFixed(0)} MB draining ${total} messages (${Math.round(g!.perSecond)} msg/s)`)
  const rows: Row[] = [
    {
      key: 'footprint.rss',
      scenario: 'footprint',
      label: `consumer peak RSS draining ${total.toLocaleString('en-US')}`,
      unit: 'MB',
      value: rssMB,
      note: `${Math.round(g!.perSecond).toLocaleString('en-US')} msg/s`,
      detail: { messages: total, perSecond: g!.perSecond },
    },
  ]
  if (ctx.pg && before) {
    // the consumer's sessions have ended, so their statistics are flushed
    await new Promise((r) => setTimeout(r, 1500))
    const after = await churn(ctx.pg.pool, ctx.pg.schema)
    const sizes = await relationSizes(ctx.pg.pool, ctx.pg.schema)
    const indexes = await messageIndexSizes(ctx.pg.pool, ctx.pg.schema)
    const message = sizes.find((s) => s.table === 'message')
    // sizes are of the whole schema (every scenario of the run stores its messages in the same table): per row
    const stored = message?.rows || 1
    const created = after.updatedOrDeleted - before.updatedOrDeleted
    ctx.log(
      `footprint: ${(created / total).toFixed(4)} dead tuples per consumed message; tables ${sizes.map((s) => `${s.table} ${(s.tableBytes / MB).toFixed(1)}+${(s.indexBytes / MB).toFixed(1)} MB`).join(', ')}`,
    )
    rows.push(
      {
        key: 'footprint.storedBytes',
        scenario: 'footprint',
        label: 'stored bytes per 256 B message (table + TOAST; Kafka: log segments)',
        unit: 'B/msg',
        value: (message?.tableBytes ?? 0) / stored,
        note: `${((message?.tableBytes ?? 0) / MB).toFixed(0)} MB for ${stored.toLocaleString('en-US')} rows`,
        detail: { tables: sizes, messageRows: stored },
      },
      {
        key: 'footprint.indexBytes',
        scenario: 'footprint',
        label: 'index bytes per message (Kafka: offset and time indexes)',
        unit: 'B/msg',
        value: (message?.indexBytes ?? 0) / stored,
        note: Object.entries(indexes)
          .map(([k, v]) => `${k.replace(/^idx_+/, '').replace(/^message_/, '')} ${Math.round(v / stored)}`)
          .join(', '),
        detail: { indexes },
      },
      {
        key: 'footprint.deadTuples',
        scenario: 'footprint',
        label: 'dead tuples per consumed message (message, offset, lease tables)',
        unit: 'tuples/msg',
        value: created / total,
        note: `n_dead_tup Δ ${after.deadTuples - before.deadTuples}`,
        detail: { before, after },
      },
    )
  }
  if (ctx.kafkaDataDir) {
    const { log, index } = logBytes(ctx.kafkaDataDir, `${topic}-`)
    rows.push(
      {
        key: 'footprint.storedBytes',
        scenario: 'footprint',
        label: 'stored bytes per 256 B message',
        unit: 'B/msg',
        value: log / total,
        note: `${(log / MB).toFixed(0)} MB`,
      },
      { key: 'footprint.indexBytes', scenario: 'footprint', label: 'index bytes per message', unit: 'B/msg', value: index / total },
    )
  }
  return rows
}

/** Disk bytes of a topic's log segments and of its offset/time indexes in a broker's log directory. */
function logBytes(root: string, prefix: string): { log: number; index: number } {
  const out = { log: 0, index: 0 }
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      // allocated blocks, not length: the broker preallocates (sparse) index files to 10 MB
      else if (e.name.endsWith('.index') || e.name.endsWith('.timeindex')) out.index += fs.statSync(p).blocks * 512
      else out.log += fs.statSync(p).blocks * 512
    }
  }
  if (!fs.existsSync(root)) return out
  for (const e of fs.readdirSync(root, { withFileTypes: true })) if (e.isDirectory() && e.name.startsWith(prefix)) walk(path.join(root, e.name))
  return out
}
