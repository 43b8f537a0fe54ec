// Partitioners in KafkaJS's ICustomPartitioner shape. The default follows DataHub's pgQueue rule
// (CRC-32 of the key), so Java/Python DataHub producers and this library place a key identically.
// kafkajs's own Partitioners (murmur2, Kafka-identical placement) are re-exported by exports.ts.
import type { ICustomPartitioner, Message, PartitionMetadata, PartitionerArgs } from 'kafkajs'
import { crc32 } from 'node:zlib'

export type { ICustomPartitioner, PartitionerArgs, PartitionMetadata }

/** DataHub: unsigned CRC-32 of the key's UTF-8 bytes (or the Buffer's bytes) modulo the partition count. */
export function partitionForKey(key: string | Uint8Array, partitionCount: number): number {
  return crc32(key) % partitionCount
}

export interface CrcPartitionerOptions {
  /** First round-robin position per topic; default random so producers don't all start at partition 0. */
  start?: (topic: string) => number
}

const hasValue = <T>(v: T | null | undefined): v is T => v !== null && v !== undefined

/**
 * explicit `partition` → that partition; key → partitionForKey; no key → round robin per topic over
 * partitions with a leader (all of them when none has), like kafkajs's default.
 */
export const defaultPartitioner = ((options: CrcPartitionerOptions = {}) => {
  const start = options.start ?? (() => Math.floor(Math.random() * 0x7fffffff))
  const counters = new Map<string, number>()

  return ({ topic, partitionMetadata, message }: PartitionerArgs): number => {
    if (hasValue(message.partition)) return message.partition
    const count = partitionMetadata.length
    const key: Message['key'] | number = message.key
    if (hasValue(key)) return partitionForKey(typeof key === 'string' || Buffer.isBuffer(key) ? key : String(key), count)

    const next = (counters.get(topic) ?? start(topic)) & 0x7fffffff
    counters.set(topic, (next + 1) & 0x7fffffff)
    const available = withLeader(partitionMetadata)
    if (available.length > 0) return available[next % available.length]!.partitionId
    return next % count
  }
}) satisfies ICustomPartitioner

/** The partitions with a leader, once per metadata array (a send passes one array for all its messages: filtering it
 * per message was most of a keyless send's client CPU, 1,024 partitions scanned per message on a wide topic). */
const leaders = new WeakMap<PartitionMetadata[], PartitionMetadata[]>()
function withLeader(partitionMetadata: PartitionMetadata[]): PartitionMetadata[] {
  let available = leaders.get(partitionMetadata)
  if (!available) leaders.set(partitionMetadata, (available = partitionMetadata.filter((p) => p.leader >= 0)))
  return available
}

/**
 * Partition metadata in the shape kafkajs's partitioners read (one always-available leader per
 * partition), for handing our partition counts to custom or kafkajs partitioners.
 */
export function buildPartitionMetadata(partitionCount: number): PartitionMetadata[] {
  return Array.from({ length: partitionCount }, (_, partitionId) => ({
    partitionErrorCode: 0,
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
    offlineReplicas: [],
  }))
}
