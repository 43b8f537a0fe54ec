import type { LogEntry } from 'kafkajs'
import { describe, expect, it } from 'vitest'
import { Kafka } from '../../../src/kafka.js'
import { logLevel } from '../../../src/kafkajs/exports.js'

function consumerLogs(readUncommitted: boolean | undefined): LogEntry[] {
  const entries: LogEntry[] = []
  const kafka = new Kafka({ clientId: 'ru', logLevel: logLevel.WARN, logCreator: () => (entry) => void entries.push(entry) })
  kafka.consumer({ groupId: 'g', readUncommitted })
  return entries
}

describe('readUncommitted', () => {
  it('is accepted and says, once, that it has no effect on PostgreSQL (docs/compatibility.md)', () => {
    const logs = consumerLogs(true)
    expect(logs).toHaveLength(1)
    expect(logs[0]!.level).toBe(logLevel.WARN)
    expect(logs[0]!.log).toMatchObject({ groupId: 'g', message: expect.stringContaining('readUncommitted has no effect on PostgreSQL') })
  })

  it('says nothing for a read-committed consumer', () => {
    expect(consumerLogs(undefined)).toEqual([])
    expect(consumerLogs(false)).toEqual([])
  })
})
