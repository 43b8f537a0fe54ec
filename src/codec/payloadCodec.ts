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
  throw new KafkaJSNonRetriableError(`Unknown payload_compression ${code} for ${where()}; known codes are 0 (NONE) and 1 (SNAPPY)`)
}

/** Consecutive values Snappy could not shrink before the encoder stops trying; then it samples one in SAMPLE_EVERY. */
const MISSES_BEFORE_SKIPPING = 4
const SAMPLE_EVERY = 64

/**
 * encodePayload for the values of one send. Snappy on incompressible data (random, encrypted, already compressed
 * values) is wasted work on every row, so after a few values in a row that did not shrink it only samples one in
 * SAMPLE_EVERY, and goes back to compressing every value as soon as a sample shrinks. A value left uncompressed
 * is stored as NONE, which readers handle anyway: this changes storage size at most, never content.
 */
export class PayloadEncoder {
  private misses = 0
  private skip = 0

  constructor(private readonly compression: PayloadCompression) {}

  encode(value: Buffer): { payload: Buffer; code: number } {
    if (this.compression !== 'SNAPPY' || value.length <= 32) return { payload: value, code: CODEC_NONE }
    if (this.skip > 0) {
      this.skip--
      return { payload: value, code: CODEC_NONE }
    }
    const encoded = encodePayload(value, this.compression)
    if (encoded.code !== CODEC_NONE) this.misses = 0
    else if (++this.misses >= MISSES_BEFORE_SKIPPING) this.skip = SAMPLE_EVERY - 1
    return encoded
  }
}
