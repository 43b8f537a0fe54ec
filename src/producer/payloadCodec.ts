import snappy from 'snappyjs'
import type { PayloadCompression } from '../config/types.js'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'

/** DataHub's payload_compression codes. Codes 2+ are reserved. */
export const CODEC_NONE = 0
export const CODEC_SNAPPY = 1

/**
 * Compresses with Snappy's raw block format (what DataHub's Java and Python clients write), keeping the plain
 * bytes when compression would not make them smaller: small or random payloads are stored as NONE.
 */
export function encodePayload(value: Buffer, compression: PayloadCompression): { payload: Buffer; code: number } {
  if (compression === 'SNAPPY' && value.length > 32) {
    const packed = Buffer.from(snappy.compress(value))
    if (packed.length < value.length) return { payload: packed, code: CODEC_SNAPPY }
  }
  return { payload: value, code: CODEC_NONE }
}

export function decodePayload(payload: Buffer, code: number, where: () => string): Buffer {
  if (code === CODEC_NONE) return payload
  if (code === CODEC_SNAPPY) return Buffer.from(snappy.uncompress(payload))
  throw new KafkaJSNonRetriableError(
    `Unknown payload_compression ${code} for ${where()}; known codes are 0 (NONE) and 1 (SNAPPY)`,
  )
}
