// The console's message browser: a partition from an offset or a timestamp, optionally only one key, each key and
// value shown the most useful way: Avro through the schema registry (Confluent wire format) as JSON, else JSON,
// else UTF-8 text, else hex. Reading here takes no lease and moves no offset.
import type { PgQueueContext } from '../client/context.js'
import { partitionWatermarks, requireTopic } from '../admin/lookup.js'
import { toKafkaMessage } from '../consumer/batch.js'
import { OpsError } from '../ops/errors.js'
import type { AvroCodec } from '../registry/avroCodec.js'
import { MAGIC_BYTE } from '../registry/wireFormat.js'

/** What the browser shows of a value; `text` is cut at MAX_SHOWN bytes (`truncated`). */
export interface ShownValue {
  format: 'null' | 'avro' | 'json' | 'text' | 'hex'
  text: string
  schemaId?: number
  truncated?: boolean
}

export interface BrowsedMessage {
  offset: string
  timestamp: string
  priority: number
  size: number
  key: ShownValue
  value: ShownValue
  headers: Record<string, ShownValue>
}

export interface BrowseRequest {
  topic: string
  partition: number
  /** start here; else at `timestamp`; else at the low watermark */
  offset?: string
  timestamp?: number
  key?: string
  limit?: number
}

export interface BrowseResult {
  topic: string
  partition: number
  low: string
  high: string
  from: string
  messages: BrowsedMessage[]
  /** where the next page starts; null at the end of the log */
  next: string | null
}

const MAX_SHOWN = 64 * 1024
const DEFAULT_LIMIT = 50

export async function browse(ctx: PgQueueContext, codec: AvroCodec, req: BrowseRequest): Promise<BrowseResult> {
  const row = await requireTopic(ctx, req.topic)
  if (req.partition >= row.partitionCount) throw new OpsError(404, `Topic "${row.name}" has no partition ${req.partition}`)
  const marks = (await partitionWatermarks(ctx, row)).find((m) => m.partition === req.partition)!
  let from = req.offset
  if (from === undefined && req.timestamp !== undefined) {
    const found = await ctx.store.topics.offsetsByTimestamp(row.id, req.timestamp)
    from = found.find((f) => f.partition === req.partition)?.offset
  }
  from ??= marks.low
  const limit = req.limit ?? DEFAULT_LIMIT
  const rows = await ctx.store.browse.browseMessages({ topicId: row.id, partition: req.partition, fromOffset: from, limit, key: req.key })
  const messages: BrowsedMessage[] = []
  for (const r of rows) {
    const { message } = toKafkaMessage(r, row.name, req.partition)
    const headers: Record<string, ShownValue> = {}
    for (const [name, value] of Object.entries(message.headers ?? {})) {
      headers[name] = showBytes(value === undefined ? null : Buffer.isBuffer(value) ? value : Buffer.from(String(value)))
    }
    messages.push({
      offset: message.offset,
      timestamp: message.timestamp,
      priority: r.priority,
      size: r.payloadBytes,
      key: showBytes(message.key),
      value: await showValue(codec, message.value),
      headers,
    })
  }
  // fewer rows than asked for: the scan reached the end of the log
  const last = messages.at(-1)
  const next = last && messages.length === limit && BigInt(last.offset) + 1n < BigInt(marks.high) ? (BigInt(last.offset) + 1n).toString() : null
  return { topic: row.name, partition: req.partition, low: marks.low, high: marks.high, from, messages, next }
}

async function showValue(codec: AvroCodec, value: Buffer | null): Promise<ShownValue> {
  if (value && value.length > 5 && value[0] === MAGIC_BYTE) {
    try {
      const decoded = await codec.decode(value)
      return cut({ format: 'avro', schemaId: decoded.schemaId, text: JSON.stringify(decoded.value, avroJson, 2) })
    } catch {
      // not a registered schema id (or not Avro after all): shown as bytes below
    }
  }
  return showBytes(value)
}

/** Avro longs may be bigint, bytes are Buffers: JSON shows them as numbers and strings. */
function avroJson(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString()
  if (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer' && Array.isArray((v as { data?: unknown }).data)) {
    return Buffer.from((v as { data: number[] }).data).toString('latin1')
  }
  return v
}

export function showBytes(value: Buffer | null): ShownValue {
  if (value === null) return { format: 'null', text: '' }
  const head = value.subarray(0, MAX_SHOWN)
  const truncated = value.length > MAX_SHOWN
  const text = new TextDecoder('utf-8', { fatal: true })
  let decoded: string | undefined
  try {
    decoded = text.decode(head, { stream: truncated })
  } catch {
    decoded = undefined
  }
  // control characters other than whitespace mean bytes, not text
  if (decoded === undefined || /[\u0000-\u0008\u000e-\u001f\u007f]/.test(decoded)) {
    return { format: 'hex', text: head.toString('hex').replace(/(..)(?!$)/g, '$1 '), ...(truncated ? { truncated } : {}) }
  }
  let format: ShownValue['format'] = 'text'
  if (!truncated && /^\s*[[{]/.test(decoded)) {
    try {
      decoded = JSON.stringify(JSON.parse(decoded), null, 2)
      format = 'json'
    } catch {
      // text that only looks like JSON
    }
  }
  return { format, text: decoded, ...(truncated ? { truncated } : {}) }
}

const cut = (v: ShownValue): ShownValue => (v.text.length > MAX_SHOWN ? { ...v, text: v.text.slice(0, MAX_SHOWN), truncated: true } : v)
