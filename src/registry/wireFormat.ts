// Confluent's wire format: magic byte 0x00, the schema id as a big-endian int32, then the Avro binary body.
// DataHub's producers write exactly this into the payload column (before optional Snappy compression).

export const MAGIC_BYTE = 0
const HEADER_BYTES = 5

export function encodeWireFormat(schemaId: number, body: Uint8Array): Buffer {
  if (!Number.isInteger(schemaId) || schemaId < 0 || schemaId > 0x7fffffff) {
    throw new RangeError(`schema id must be an int32 from 0 to 2^31-1, got ${schemaId}`)
  }
  const out = Buffer.allocUnsafe(HEADER_BYTES + body.length)
  out[0] = MAGIC_BYTE
  out.writeInt32BE(schemaId, 1)
  out.set(body, HEADER_BYTES)
  return out
}

export function decodeWireFormat(data: Uint8Array): { schemaId: number; body: Buffer } {
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  if (buf.length < HEADER_BYTES) throw new Error(`not Confluent wire format: ${buf.length} bytes, need at least ${HEADER_BYTES}`)
  if (buf[0] !== MAGIC_BYTE) throw new Error(`not Confluent wire format: magic byte ${buf[0]}, expected ${MAGIC_BYTE}`)
  return { schemaId: buf.readInt32BE(1), body: buf.subarray(HEADER_BYTES) }
}
