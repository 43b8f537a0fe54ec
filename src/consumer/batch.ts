import type { Batch, KafkaMessage } from 'kafkajs'
import { decodeHeaders } from '../kafkajs/headers.js'
import { decodePayload } from '../codec/payloadCodec.js'
import { FLAG_NULL_KEY, FLAG_NULL_VALUE } from '../store/enqueue.js'
import type { FetchedRow } from '../store/fetch.js'
import { offsetOfSeq } from './partitionState.js'

/** Header set on a message whose stored payload could not be decoded; its value is the stored bytes. */
export const DECODE_ERROR_HEADER = 'x-pgqueue-decode-error'

/** A delivered message plus what the consumer needs to track it (its seq and priority). */
export interface DeliveredMessage {
  message: KafkaMessage
  seq: bigint
  priority: number
  enqueuedAtMs: number
}

export function toKafkaMessage(row: FetchedRow, topic: string, partition: number): DeliveredMessage {
  const seq = BigInt(row.seq)
  const offset = offsetOfSeq(seq)
  const headers = decodeHeaders(row.headers)
  let value: Buffer | null = null
  if (!(row.flags & FLAG_NULL_VALUE)) {
    try {
      value = decodePayload(row.payload, row.compression, () => `topic "${topic}" partition ${partition} offset ${offset}`)
    } catch (e) {
      // One undecodable row must not crash-loop the consumer: hand it over raw and say why.
      value = row.payload
      headers[DECODE_ERROR_HEADER] = Buffer.from((e as Error).message)
    }
  }
  const key = row.flags & FLAG_NULL_KEY ? null : (row.messageKey ?? Buffer.from(row.routingKey, 'utf8'))
  const message = {
    magicByte: 2,
    attributes: 0,
    timestamp: row.timestampMs,
    offset,
    key,
    value,
    headers,
    isControlRecord: false,
    batchContext: null,
    size: row.payloadBytes,
  } as unknown as KafkaMessage
  return { message, seq, priority: row.priority, enqueuedAtMs: Number(row.enqueuedAtMs) }
}

/** KafkaJS's Batch over delivered messages; offsets are strings as in KafkaJS. */
export function createBatch(topic: string, partition: number, highWatermark: string, delivered: DeliveredMessage[]): Batch {
  const messages = delivered.map((d) => d.message)
  const hw = BigInt(highWatermark)
  const firstOffset = () => (messages.length === 0 ? null : messages[0].offset)
  const lastOffset = () => (messages.length === 0 ? (hw - 1n).toString() : messages[messages.length - 1].offset)
  return {
    topic,
    partition,
    highWatermark,
    messages,
    isEmpty: () => messages.length === 0,
    firstOffset,
    lastOffset,
    offsetLag: () => (hw - 1n - BigInt(lastOffset())).toString(),
    offsetLagLow: () => {
      const first = firstOffset()
      return first === null ? '0' : (hw - 1n - BigInt(first)).toString()
    },
  }
}
