// Verification: every partition of the destination re-read over the copied range, its count and checksum compared
// with what was read from the source, and every group's destination offsets compared with their translation.
import { chain, EMPTY_CHECKSUM } from './checksum.js'
import type { Endpoint } from './endpoints.js'
import type { GroupOffsets } from './groups.js'
import { readRanges } from './reader.js'
import type { TopicState } from './state.js'

export interface PartitionCheck {
  topic: string
  partition: number
  /** offsets in the copied source range (the count when the source log is dense, as pgQueue's always is) */
  sourceRange: number
  sourceCount: number
  destinationCount: number
  sourceChecksum: string
  destinationChecksum: string
  ok: boolean
}

export interface GroupCheck {
  topic: string
  groupId: string
  partition: number
  expected: string
  found: string
  ok: boolean
}

/** `denseSource`: every offset of the source range holds a message (pgQueue), so each must have been copied. */
export async function verifyMessages(to: Endpoint, state: TopicState, denseSource: boolean): Promise<PartitionCheck[]> {
  const found = new Map(state.partitions.map((p) => [p.partition, { count: 0, checksum: EMPTY_CHECKSUM }]))
  await readRanges(
    to,
    state.topic,
    new Map(state.partitions.map((p) => [p.partition, { from: p.destinationStart, to: p.destinationNext }])),
    async (partition, messages) => {
      const f = found.get(partition)!
      for (const m of messages) {
        f.checksum = chain(f.checksum, { key: m.key, value: m.value, headers: m.headers, timestamp: m.timestamp })
        f.count++
      }
    },
  )
  return state.partitions.map((p) => {
    const f = found.get(p.partition)!
    return {
      topic: state.topic,
      partition: p.partition,
      sourceRange: p.sourceNext - p.sourceStart,
      sourceCount: p.copied,
      destinationCount: f.count,
      sourceChecksum: p.checksum,
      destinationChecksum: f.checksum,
      ok: f.count === p.copied && f.checksum === p.checksum && (!denseSource || p.copied === p.sourceNext - p.sourceStart),
    }
  })
}

export async function verifyGroups(to: Endpoint, topic: string, groups: readonly GroupOffsets[]): Promise<GroupCheck[]> {
  const checks: GroupCheck[] = []
  for (const g of groups) {
    const [t] = await to.admin.fetchOffsets({ groupId: g.groupId, topics: [topic] })
    for (const p of g.partitions) {
      const got = t?.partitions.find((x) => x.partition === p.partition)?.offset ?? '-1'
      checks.push({ topic, groupId: g.groupId, partition: p.partition, expected: p.destination, found: got, ok: got === p.destination })
    }
  }
  return checks
}
