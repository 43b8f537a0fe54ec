// Every group's committed offsets on a topic, translated through the copy's offset runs and written to the
// destination with admin.setOffsets (which, on Kafka, needs the group to have no live members there).
import type { Admin } from 'kafkajs'
import { READER_GROUP_PREFIX, type Endpoint } from './endpoints.js'
import { translate } from './offsetMap.js'
import type { TopicState } from './state.js'

const EARLIEST = '-2'

export interface GroupOffsets {
  groupId: string
  partitions: Array<{ partition: number; source: string; destination: string }>
}

/** Groups with a committed offset on the topic (all, or those named). */
export async function sourceGroupOffsets(from: Endpoint, state: TopicState, only?: readonly string[]): Promise<GroupOffsets[]> {
  const { groups } = await from.admin.listGroups()
  const ids = groups.map((g) => g.groupId).filter((id) => !id.startsWith(READER_GROUP_PREFIX) && (!only?.length || only.includes(id)))
  const out: GroupOffsets[] = []
  for (const groupId of ids.sort()) {
    const [topic] = await from.admin.fetchOffsets({ groupId, topics: [state.topic] })
    // '-1' is also what a partition without a commit reports, so only an offset and the earliest marker ('-2', after
    // resetOffsets({ earliest: true })) move; the marker means the same on both sides and moves as it is
    const partitions = (topic?.partitions ?? [])
      .filter((p) => Number(p.offset) >= 0 || p.offset === EARLIEST)
      .map((p) => {
        const ps = state.partitions.find((x) => x.partition === p.partition)!
        const destination = p.offset === EARLIEST ? EARLIEST : String(translate(ps.runs, Number(p.offset), ps.destinationNext))
        return { partition: p.partition, source: p.offset, destination }
      })
    if (partitions.length > 0) out.push({ groupId, partitions })
  }
  return out
}

export async function writeGroupOffsets(to: Admin, topic: string, groups: readonly GroupOffsets[]): Promise<void> {
  for (const g of groups) {
    await to.setOffsets({ groupId: g.groupId, topic, partitions: g.partitions.map((p) => ({ partition: p.partition, offset: p.destination })) })
  }
}
