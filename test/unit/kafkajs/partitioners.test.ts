import kafkajs from 'kafkajs'
import { describe, expect, it } from 'vitest'
// the runtime's zlib.crc32 (java.util.zip.CRC32's algorithm) is what the partitioners use
import { crc32 } from 'node:zlib'
import { Partitioners } from '../../../src/kafkajs/exports.js'
import { buildPartitionMetadata, defaultPartitioner, partitionForKey } from '../../../src/kafkajs/partitioners.js'

const URN_DATASET = 'urn:li:dataset:(urn:li:dataPlatform:kafka,PageViewEvent,PROD)'
const URN_USER = 'urn:li:corpuser:datahub'

describe('crc32', () => {
  it('matches the standard check values', () => {
    expect(crc32('123456789')).toBe(0xcbf43926)
    expect(crc32('')).toBe(0)
    expect(crc32('The quick brown fox jumps over the lazy dog')).toBe(0x414fa339)
    expect(crc32(Buffer.from([0xff, 0xff, 0xff, 0xff]))).toBe(0xffffffff)
    expect(crc32(new Uint8Array(32))).toBe(0x190a55ad)
  })

  it('matches the DataHub vectors and is unsigned', () => {
    expect(crc32(URN_DATASET)).toBe(55210828)
    expect(crc32(URN_USER)).toBe(3185751823)
    expect(crc32('a')).toBe(3904355907)
  })

  it('hashes strings as UTF-8 and can continue a running value', () => {
    expect(crc32('Zürich ✓')).toBe(crc32(Buffer.from('Zürich ✓', 'utf8')))
    expect(crc32('6789', crc32('12345'))).toBe(0xcbf43926)
  })
})

describe('DataHub partitioning', () => {
  it.each([
    [URN_DATASET, 2, 0],
    [URN_DATASET, 4, 0],
    [URN_DATASET, 8, 4],
    [URN_USER, 2, 1],
    [URN_USER, 4, 3],
    [URN_USER, 8, 7],
    ['a', 8, 3],
    ['', 8, 0],
  ])('%s mod %i → %i', (key, count, expected) => {
    expect(partitionForKey(key, count)).toBe(expected)
    const partitioner = defaultPartitioner()
    const partitionMetadata = buildPartitionMetadata(count)
    expect(partitioner({ topic: 't', partitionMetadata, message: { key, value: 'v' } })).toBe(expected)
    expect(partitioner({ topic: 't', partitionMetadata, message: { key: Buffer.from(key), value: 'v' } })).toBe(expected)
  })

  it('an explicit partition wins over the key', () => {
    const p = defaultPartitioner()
    expect(p({ topic: 't', partitionMetadata: buildPartitionMetadata(8), message: { key: URN_USER, partition: 2, value: null } })).toBe(2)
    expect(p({ topic: 't', partitionMetadata: buildPartitionMetadata(8), message: { key: URN_USER, partition: 0, value: null } })).toBe(0)
  })

  it('round-robins keyless messages per topic', () => {
    const p = defaultPartitioner({ start: () => 0 })
    const meta = buildPartitionMetadata(3)
    const pick = (topic: string) => p({ topic, partitionMetadata: meta, message: { value: 'x', key: null } })
    expect([pick('a'), pick('a'), pick('b'), pick('a'), pick('a'), pick('b')]).toEqual([0, 1, 0, 2, 0, 1])
  })

  it('round-robin skips partitions without a leader', () => {
    const meta = buildPartitionMetadata(4).map((m) => (m.partitionId % 2 ? { ...m, leader: -1 } : m))
    const p = defaultPartitioner({ start: () => 0 })
    const picks = Array.from({ length: 4 }, () => p({ topic: 't', partitionMetadata: meta, message: { value: 'x' } }))
    expect(picks).toEqual([0, 2, 0, 2])
  })

  it('default start is random but stays in range', () => {
    const meta = buildPartitionMetadata(5)
    for (let i = 0; i < 20; i++) {
      const v = defaultPartitioner()({ topic: 't', partitionMetadata: meta, message: { value: 'x' } })
      expect(v).toBeGreaterThanOrEqual(0)
      expect(v).toBeLessThan(5)
    }
  })
})

describe('kafkajs Partitioners re-export', () => {
  it('is kafkajs own object', () => {
    expect(Partitioners).toBe(kafkajs.Partitioners)
  })

  it('works with our partition metadata (murmur2 placement, stable per key)', () => {
    const meta = buildPartitionMetadata(8)
    const murmur = Partitioners.DefaultPartitioner()
    const a = murmur({ topic: 't', partitionMetadata: meta, message: { key: URN_USER, value: 'v' } })
    expect(murmur({ topic: 't', partitionMetadata: meta, message: { key: URN_USER, value: 'w' } })).toBe(a)
    expect(a).toBeGreaterThanOrEqual(0)
    expect(a).toBeLessThan(8)
    // murmur2 and CRC-32 disagree for some keys: users choosing Partitioners get Kafka's placement, not DataHub's.
    const keys = Array.from({ length: 50 }, (_, i) => `key-${i}`)
    const differs = keys.some((key) => murmur({ topic: 't', partitionMetadata: meta, message: { key, value: 'v' } }) !== partitionForKey(key, 8))
    expect(differs).toBe(true)
    const keyless = Partitioners.DefaultPartitioner()({ topic: 't', partitionMetadata: meta, message: { value: 'v' } })
    expect(meta.map((m) => m.partitionId)).toContain(keyless)
    expect(Partitioners.LegacyPartitioner()({ topic: 't', partitionMetadata: meta, message: { key: 'k', value: 'v' } })).toBeLessThan(8)
  })
})
