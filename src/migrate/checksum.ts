// A partition's checksum: a SHA-256 chain over its messages in offset order, each message hashed from its key,
// value, headers (sorted by name: pgQueue keeps them in jsonb, which does not keep their order) and timestamp. A chain
// rather than one running hash, so the state file can carry it across a resume, and batch boundaries do not matter.
import { createHash } from 'node:crypto'
import type { IHeaders } from 'kafkajs'

export interface ChecksummedMessage {
  key: Buffer | null
  value: Buffer | null
  headers?: IHeaders
  timestamp: string
}

export const EMPTY_CHECKSUM = ''

const bytes = (b: Buffer | string | null | undefined): Buffer =>
  b === null || b === undefined ? Buffer.alloc(0) : Buffer.isBuffer(b) ? b : Buffer.from(b)

function field(hash: ReturnType<typeof createHash>, value: Buffer | string | null | undefined): void {
  const b = bytes(value)
  // length-prefixed (-1 = null), so no two different messages hash alike
  const len = Buffer.alloc(4)
  len.writeInt32BE(value === null || value === undefined ? -1 : b.length)
  hash.update(len).update(b)
}

export function messageDigest(m: ChecksummedMessage): Buffer {
  const hash = createHash('sha256')
  field(hash, m.key)
  field(hash, m.value)
  for (const name of Object.keys(m.headers ?? {}).sort()) {
    const values = m.headers![name]
    for (const v of Array.isArray(values) ? values : [values]) {
      field(hash, name)
      field(hash, v as Buffer | string | undefined)
    }
  }
  field(hash, m.timestamp)
  return hash.digest()
}

/** The chain after one more message. */
export function chain(previous: string, m: ChecksummedMessage): string {
  return createHash('sha256').update(previous).update(messageDigest(m)).digest('hex')
}
