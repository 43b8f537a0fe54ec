import { KafkaJSNonRetriableError } from './errors.js'

// Offset arguments of consumer.seek / commitOffsets and admin.setOffsets, checked as KafkaJS checks them.

const fail = (message: string): never => {
  throw new KafkaJSNonRetriableError(message)
}

const MAX_OFFSET = 9_223_372_036_854_775_806n

const isLong = (v: unknown): boolean => {
  try {
    BigInt(v as string)
    return (typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint') && String(v).trim() !== ''
  } catch {
    return false
  }
}

/** seek / commitOffsets / setOffsets argument checks with KafkaJS's messages. */
export function validateOffsetEntry(
  entry: { topic: string; partition: number; offset: string; metadata?: string | null },
  { allowSpecial, checkMetadata }: { allowSpecial: boolean; checkMetadata: boolean },
): void {
  const { topic, partition, offset, metadata } = entry ?? ({} as typeof entry)
  if (!topic) fail(`Invalid topic ${topic}`)
  if (typeof partition !== 'number' && typeof partition !== 'string') fail(`Invalid partition, expected a number received ${partition}`)
  if (isNaN(Number(partition)) || !Number.isInteger(Number(partition)) || Number(partition) < 0) {
    fail(`Invalid partition, expected a number received ${partition}`)
  }
  if (!isLong(offset)) fail(`Invalid offset, expected a long received ${offset}`)
  const value = BigInt(offset)
  if (value < 0n && !(allowSpecial && (value === -1n || value === -2n))) fail('Offset must not be a negative number')
  // stored as a PostgreSQL bigint seq = offset + 1
  if (value > MAX_OFFSET) fail(`Invalid offset ${offset}: the largest offset is ${MAX_OFFSET}`)
  if (checkMetadata && metadata !== undefined && metadata !== null && typeof metadata !== 'string') {
    fail(`Invalid offset metadata, expected string or null, received ${metadata}`)
  }
}
