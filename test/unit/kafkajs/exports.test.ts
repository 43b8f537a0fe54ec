import { createRequire } from 'node:module'
import kafkajs from 'kafkajs'
import snappy from 'snappyjs'
import { describe, expect, it } from 'vitest'
import * as ours from '../../../src/kafkajs/exports.js'

const require = createRequire(__filename)
// Extras we add on top of kafkajs's surface.
const EXTRAS = ['SnappyCodec', 'registerSnappyCodec']

describe('exports', () => {
  it('exports every runtime export of kafkajs except Kafka, as the same objects', () => {
    const theirs = Object.keys(require('kafkajs') as object).filter((k) => k !== 'Kafka')
    const mine = Object.keys(ours).filter((k) => !EXTRAS.includes(k))
    expect(mine.sort()).toEqual(theirs.sort())
    for (const name of theirs) {
      expect((ours as Record<string, unknown>)[name], name).toBe((kafkajs as unknown as Record<string, unknown>)[name])
    }
  })

  it('enum values are kafkajs values', () => {
    expect(ours.logLevel.INFO).toBe(4)
    expect(ours.CompressionTypes.Snappy).toBe(2)
    expect(ours.ConfigResourceTypes.TOPIC).toBe(2)
    expect(
      ours.AssignerProtocol.MemberMetadata.decode(
        ours.AssignerProtocol.MemberMetadata.encode({ version: 1, topics: ['t'], userData: Buffer.alloc(0) }),
      ),
    ).toMatchObject({ topics: ['t'] })
  })
})

describe('Snappy codec', () => {
  const compression = require('kafkajs/src/protocol/message/compression') as {
    lookupCodec(type: number): { compress(e: { buffer: Buffer }): Promise<Buffer>; decompress(b: Buffer): Promise<Buffer> }
  }
  const text = Buffer.from('snappy snappy snappy snappy, compress me please '.repeat(20))

  it('replaces kafkajs\'s "not implemented" codec for the kafkajs encoder itself', async () => {
    ours.registerSnappyCodec()
    const codec = compression.lookupCodec(ours.CompressionTypes.Snappy)
    const compressed = await codec.compress({ buffer: text })
    expect(compressed.length).toBeLessThan(text.length)
    expect(Buffer.from(snappy.uncompress(compressed))).toEqual(text) // raw block format (DataHub's)
    expect(await codec.decompress(compressed)).toEqual(text)
  })

  it('decodes the xerial framing Java producers write', async () => {
    const a = text.subarray(0, 300)
    const b = text.subarray(300)
    const block = (chunk: Buffer) => {
      const c = Buffer.from(snappy.compress(chunk))
      const len = Buffer.alloc(4)
      len.writeInt32BE(c.length)
      return Buffer.concat([len, c])
    }
    const header = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0, 0, 0, 1, 0, 0, 0, 1])
    expect(await ours.SnappyCodec.decompress(Buffer.concat([header, block(a), block(b)]))).toEqual(text)
    await expect(ours.SnappyCodec.decompress(Buffer.concat([header, block(a)]).subarray(0, 30))).rejects.toThrow(/Truncated/)
  })
})
