// DataHub's routing rules, needed to write rows its Java and Python clients agree with.
import { createHash } from 'node:crypto'
import { crc32 } from 'node:zlib'

/** MIME DataHub's Java producer stores on its rows (the topic default is application/avro). */
export const DATAHUB_AVRO_CONTENT_TYPE = 'application/vnd.confluent.avro+binary'
export const DATAHUB_TOPIC_CONTENT_TYPE = 'application/avro'

/** Partition of a routing key: unsigned CRC-32 (java.util.zip.CRC32) of its UTF-8 bytes, modulo the count. */
export function dataHubPartition(routingKey: string, partitionCount: number): number {
  if (!Number.isInteger(partitionCount) || partitionCount < 1) {
    throw new RangeError(`partition count must be >= 1, got ${partitionCount}`)
  }
  return crc32(routingKey) % partitionCount
}

const MOD_2_62 = 1n << 62n

/**
 * The advisory lock DataHub's producers take per (topic id, partition) while enqueueing: the first 8 bytes of
 * SHA-256("<topicId>:<partitionId>") as an unsigned big-endian integer, modulo 2^62 (always a valid int8).
 */
export function dataHubLockKey(topicId: number | bigint | string, partitionId: number): bigint {
  const digest = createHash('sha256').update(`${topicId}:${partitionId}`, 'utf8').digest()
  return digest.readBigUInt64BE(0) % MOD_2_62
}

/** DataHub's registry subject for a topic: `<topic>-value`. */
export function dataHubSubject(topic: string): string {
  return `${topic}-value`
}
