// DataHub's row format for the message table: Confluent wire-format Avro in `payload` (Snappy raw block when
// payload_compression = 1), headers as `[{"key","v":base64}]` JSON, a routing key and a priority.
import snappy from 'snappyjs'
import { decodeHeaderPairs, encodeHeaders, type HeaderPair } from '../kafkajs/headers.js'
import { CODEC_NONE, CODEC_SNAPPY, decodePayload } from '../codec/payloadCodec.js'
import { decodeWireFormat, encodeWireFormat } from '../registry/wireFormat.js'
import { DATAHUB_AVRO_CONTENT_TYPE } from './routing.js'

export type DataHubHeaders = ReadonlyArray<readonly [string, Uint8Array | string]> | Record<string, Uint8Array | string>

export interface DataHubRowInput {
  routingKey: string
  schemaId: number
  /** the event's Avro binary, without the wire-format header */
  avro: Uint8Array
  /** 0..9, default 5 (DataHub's Java producer always writes 5) */
  priority?: number
  headers?: DataHubHeaders
  /** default SNAPPY, DataHub's default */
  compression?: 'SNAPPY' | 'NONE'
}

/** Column values for one message row (topic, partition and seq are the writer's business). */
export interface DataHubRow {
  routingKey: string
  priority: number
  payload: Buffer
  payloadCompression: number
  /** text for the jsonb column, null without headers */
  headers: string | null
  contentType: string
}

export interface DecodedDataHubRow {
  routingKey: string
  priority: number
  schemaId: number
  /** Avro binary body */
  avro: Buffer
  /** the uncompressed payload: 0x00, schema id, Avro */
  wire: Buffer
  headers: HeaderPair[]
}

export function encodeDataHubRow(input: DataHubRowInput): DataHubRow {
  const priority = input.priority ?? 5
  if (!Number.isInteger(priority) || priority < 0 || priority > 9) throw new RangeError(`priority must be 0..9, got ${priority}`)
  const wire = encodeWireFormat(input.schemaId, input.avro)
  // Like DataHub's Java (Snappy.compress) and Python (compress_raw) clients: compressed whatever the size.
  const snappyOn = (input.compression ?? 'SNAPPY') === 'SNAPPY'
  return {
    routingKey: input.routingKey,
    priority,
    payload: snappyOn ? Buffer.from(snappy.compress(wire)) : wire,
    payloadCompression: snappyOn ? CODEC_SNAPPY : CODEC_NONE,
    headers: encodeHeaders(headerPairs(input.headers)),
    contentType: DATAHUB_AVRO_CONTENT_TYPE,
  }
}

/** Reverses encodeDataHubRow; throws on an unknown compression code or a payload that is not wire format. */
export function decodeDataHubRow(row: {
  payload: Uint8Array
  payloadCompression: number
  headers?: unknown
  routingKey?: string
  priority?: number
}): DecodedDataHubRow {
  const raw = Buffer.from(row.payload.buffer, row.payload.byteOffset, row.payload.byteLength)
  const where = () => `DataHub row${row.routingKey ? ` with routing key "${row.routingKey}"` : ''}`
  const wire = decodePayload(raw, row.payloadCompression, where)
  const { schemaId, body } = decodeWireFormat(wire)
  return {
    routingKey: row.routingKey ?? '',
    priority: row.priority ?? 5,
    schemaId,
    avro: body,
    wire,
    headers: decodeHeaderPairs(row.headers ?? null),
  }
}

function headerPairs(headers: DataHubHeaders | undefined): Array<[string, Uint8Array]> {
  if (!headers) return []
  const entries = Array.isArray(headers) ? headers : Object.entries(headers)
  return entries.map(([k, v]) => [k, typeof v === 'string' ? Buffer.from(v, 'utf8') : v] as [string, Uint8Array])
}
