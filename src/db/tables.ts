import { createHash } from 'node:crypto'
import { validateSqlName } from '../config/sqlNames.js'
import { quoteIdent } from './identifiers.js'

/** Fully qualified, quoted names of every pgQueue table for one schema + prefix. */
export interface Tables {
  schema: string
  prefix: string
  contentType: string
  topic: string
  message: string
  consumerOffset: string
  messageGroupLease: string
  consumerRegistration: string
  schemaMigration: string
  partitionSeq: string
  groupMember: string
  partitionLease: string
  groupGeneration: string
  producerSequence: string
  transactionalProducer: string
  /** failed handler attempts of the dead-letter extension */
  deliveryAttempt: string
  /** sequence of negative provisional seqs for messages whose seq is assigned at commit */
  provisionalSeq: string
  /** function (lo, hi): the enqueued_at range rows not visible yet can carry (migrations/R__read_horizon.sql) */
  readHorizon: string
  /** IMMUTABLE function: the start of the time partition (of the configured width) holding a timestamp */
  partitionFloor: string
  /** LISTEN/NOTIFY channel for new messages of this schema + prefix */
  notifyChannel: string
  /** unqualified name of a table, e.g. for partition children */
  bare(table: 'message'): string
}

export function tablesFor(schemaRaw: string, prefixRaw: string): Tables {
  const schema = validateSqlName('schema', schemaRaw)
  const prefix = validateSqlName('table prefix', prefixRaw)
  const q = (suffix: string) => `${quoteIdent(schema)}.${quoteIdent(`${prefix}_${suffix}`)}`
  const channel = `${schema}.${prefix}`
  return {
    schema,
    prefix,
    contentType: q('content_type'),
    topic: q('topic'),
    message: q('message'),
    consumerOffset: q('consumer_offset'),
    messageGroupLease: q('message_group_lease'),
    consumerRegistration: q('consumer_registration'),
    schemaMigration: q('schema_migration'),
    partitionSeq: q('partition_seq'),
    groupMember: q('group_member'),
    partitionLease: q('partition_lease'),
    groupGeneration: q('group_generation'),
    producerSequence: q('producer_sequence'),
    transactionalProducer: q('transactional_producer'),
    deliveryAttempt: q('delivery_attempt'),
    provisionalSeq: q('provisional_seq'),
    readHorizon: q('read_horizon'),
    partitionFloor: q('partition_floor'),
    // channel names are identifiers (63 bytes); long ones are hashed so two schemas never share one
    notifyChannel: channel.length <= 63 ? channel : `pgq_${createHash('sha1').update(channel).digest('hex')}`,
    bare: (table) => `${prefix}_${table}`,
  }
}
