// Test-side loops over the DataHub client: read a group dry the way DataHub's poll loop does.
import { DataHubQueue, type Received } from './queue.js'

/**
 * Polls every partition of `topic` for `group` (receive, then commit what was received) until a poll returns
 * nothing. Returns everything received, in delivery order; `stuckAhead` collects STUCK_AHEAD warnings.
 */
export async function drainDataHubGroup(
  queue: DataHubQueue,
  group: string,
  topic: string,
  opts: { maxMessages?: number; stuckAhead?: number[] } = {},
): Promise<Received[]> {
  const row = await queue.topicRow(topic)
  if (!row) throw new Error(`DataHub client: no topic ${topic}`)
  const owner = DataHubQueue.lockOwner(group)
  const partitions = Array.from({ length: row.partitionCount }, (_, i) => i)
  const all: Received[] = []
  await queue.register(group, row.id)
  for (;;) {
    const got = await queue.receiveBatchForGroup(group, row.id, partitions, owner, 600, opts.maxMessages ?? 500, opts.stuckAhead)
    if (got.length === 0) return all
    all.push(...got)
    await queue.commitForGroup(group, got)
  }
}

/** Values that occur more than once, with their counts. */
export function repeated(values: string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1)
  for (const [v, n] of counts) if (n < 2) counts.delete(v)
  return counts
}
