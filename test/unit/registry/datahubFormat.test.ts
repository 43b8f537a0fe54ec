// DataHub interop vectors (reference section 12) and the DataHub row format.
import snappy from 'snappyjs'
import { describe, expect, it } from 'vitest'
import { dataHubCatalogue } from '../../../src/datahub/topics.js'
import { decodeDataHubRow, encodeDataHubRow } from '../../../src/datahub/rows.js'
import { dataHubLockKey, dataHubPartition } from '../../../src/datahub/routing.js'

describe('DataHub routing vectors', () => {
  it('partitions URNs by unsigned CRC-32 modulo the count', () => {
    const dataset = 'urn:li:dataset:(urn:li:dataPlatform:kafka,PageViewEvent,PROD)'
    expect([2, 4, 8].map((n) => dataHubPartition(dataset, n))).toEqual([0, 0, 4])
    expect([2, 4, 8].map((n) => dataHubPartition('urn:li:corpuser:datahub', n))).toEqual([1, 3, 7])
    expect(dataHubPartition('a', 8)).toBe(3)
    expect(dataHubPartition('', 8)).toBe(0)
  })

  it('derives the per-partition advisory lock key like DataHub', () => {
    expect(dataHubLockKey(1, 0)).toBe(2767566679685037052n)
    expect(dataHubLockKey(1, 1)).toBe(1636373865116826571n)
    expect(dataHubLockKey(2, 0)).toBe(2788169034002048184n)
  })
})

describe('DataHub rows', () => {
  it('writes headers as DataHub JSON and the payload as Snappy-compressed wire format', () => {
    const avroBody = Buffer.from('avro-bytes')
    const row = encodeDataHubRow({ routingKey: 'urn:li:corpuser:datahub', schemaId: 16, avro: avroBody, headers: [['traceparent', '00-abc']] })
    expect(row.headers).toBe('[{"key":"traceparent","v":"MDAtYWJj"}]')
    expect(row.payloadCompression).toBe(1)
    expect(row.priority).toBe(5)
    expect(row.contentType).toBe('application/vnd.confluent.avro+binary')
    const wire = Buffer.from(snappy.uncompress(row.payload))
    expect([...wire.subarray(0, 5)]).toEqual([0, 0, 0, 0, 16])
    expect(wire.subarray(5)).toEqual(avroBody)
  })

  it('decodes what it encodes, compressed or not', () => {
    for (const compression of ['SNAPPY', 'NONE'] as const) {
      const row = encodeDataHubRow({ routingKey: 'k', schemaId: 3, avro: Buffer.from([1, 2, 3]), priority: 2, compression, headers: { a: 'b' } })
      const back = decodeDataHubRow({ ...row, headers: JSON.parse(row.headers!) })
      expect(back).toMatchObject({ routingKey: 'k', priority: 2, schemaId: 3, avro: Buffer.from([1, 2, 3]) })
      expect(back.headers).toEqual([['a', Buffer.from('b')]])
    }
    expect(encodeDataHubRow({ routingKey: 'k', schemaId: 1, avro: Buffer.alloc(0) }).headers).toBeNull()
  })

  it('names the codec when the compression code is unknown', () => {
    expect(() => decodeDataHubRow({ payload: Buffer.from([0, 0, 0, 0, 1]), payloadCompression: 7, routingKey: 'k' })).toThrow(
      /Unknown payload_compression 7 for DataHub row with routing key "k"/,
    )
  })
})

describe('dataHubCatalogue', () => {
  it('has DataHub settings per topic', () => {
    const byName = Object.fromEntries(dataHubCatalogue().map((r) => [r.name, r]))
    expect(Object.keys(byName).sort()).toEqual([
      'DataHubUpgradeHistory_v1',
      'DataHubUsageEvent_v1',
      'FailedMetadataChangeProposal_v1',
      'MetadataChangeLog_Timeseries_v1',
      'MetadataChangeLog_Versioned_v1',
      'MetadataChangeProposal_v1',
      'PlatformEvent_v1',
    ])
    expect(byName.MetadataChangeLog_Timeseries_v1).toMatchObject({ retentionMaxAgeSeconds: 7776000, aggressiveRetention: true, partitionCount: 1 })
    expect(byName.DataHubUpgradeHistory_v1).toMatchObject({ retentionMaxAgeSeconds: 0, maxRowsPerTopic: 10 })
    expect(byName.FailedMetadataChangeProposal_v1).toMatchObject({ maxRowsPerTopic: 100, retentionMaxAgeSeconds: 604800 })
    expect(byName.PlatformEvent_v1.aggressiveRetention).toBe(false)
  })

  it('applies options, drops and adds topics, and validates', () => {
    const rows = dataHubCatalogue({
      partitions: 3,
      analyticsEnabled: false,
      topics: { PlatformEvent_v1: false, WorkEvent_v1: { partitionCount: 2 } },
    })
    const names = rows.map((r) => r.name)
    expect(names).not.toContain('DataHubUsageEvent_v1')
    expect(names).not.toContain('PlatformEvent_v1')
    expect(rows.find((r) => r.name === 'WorkEvent_v1')).toMatchObject({ partitionCount: 2, retentionMaxAgeSeconds: 604800 })
    expect(rows.find((r) => r.name === 'MetadataChangeProposal_v1')!.partitionCount).toBe(3)
    expect(() => dataHubCatalogue({ partitions: 0 })).toThrow(/invalid partition count 0/)
  })
})
