// In-process Avro encoding against the registry (no HTTP round trip): values to Confluent wire format and back,
// with parsed schemas cached by id like a registry client does.
import type { PgSchemaRegistry } from './registry.js'
import { decodeWireFormat, encodeWireFormat } from './wireFormat.js'

export interface AvroCodec {
  /** Avro-encodes `value` with schema `schemaId` into the wire format. */
  encode(schemaId: number, value: unknown): Promise<Buffer>
  /** Encodes with the latest live version of `subject`. */
  encodeLatest(subject: string, value: unknown): Promise<{ schemaId: number; data: Buffer }>
  /** Reads the schema id from the wire format and decodes with that schema. */
  decode(data: Uint8Array): Promise<{ schemaId: number; value: unknown }>
}

export function createAvroCodec(registry: PgSchemaRegistry): AvroCodec {
  const encode = async (schemaId: number, value: unknown) => {
    await registry.schemaById(schemaId) // 40403 for an unknown id, before parsing
    const type = await registry.resolver.typeOf(schemaId)
    return encodeWireFormat(schemaId, type.toBuffer(value))
  }
  return {
    encode,
    async encodeLatest(subject, value) {
      const schemaId = await registry.latestSchemaId(subject)
      return { schemaId, data: await encode(schemaId, value) }
    },
    async decode(data) {
      const { schemaId, body } = decodeWireFormat(data)
      await registry.schemaById(schemaId)
      return { schemaId, value: (await registry.resolver.typeOf(schemaId)).fromBuffer(body) }
    },
  }
}
