import { randomBytes } from 'node:crypto'
import type { EachMessagePayload, IHeaders, KafkaMessage } from 'kafkajs'

/** A topic or group name no other test (or earlier run) uses. */
export function uniqueName(prefix: string): string {
  return `compat_${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`
}

/** Resolves once `predicate` holds; rejects with `message` after `timeout` ms (a hang guard, not a sleep). */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  { timeout = 20_000, interval = 20, message = 'condition' }: { timeout?: number; interval?: number; message?: string } = {},
): Promise<void> {
  const deadline = Date.now() + timeout
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${message}`)
    await new Promise((r) => setTimeout(r, interval))
  }
}

/** Resolves with the first emission of an event-like source, or rejects after `timeout` ms. */
export function once<T>(
  subscribe: (listener: (value: T) => void) => () => void,
  { timeout = 30_000, message = 'event' }: { timeout?: number; message?: string } = {},
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      remove()
      reject(new Error(`timed out after ${timeout} ms waiting for ${message}`))
    }, timeout)
    const remove = subscribe((value) => {
      clearTimeout(timer)
      remove()
      resolve(value)
    })
  })
}

/** A consumed message reduced to what tests compare; key/value decoded as UTF-8. */
export interface Received {
  topic: string
  partition: number
  offset: string
  key: string | null
  value: string | null
  headers: IHeaders
  timestamp: string
  raw: KafkaMessage
}

export function toReceived(topic: string, partition: number, message: KafkaMessage): Received {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key === null ? null : message.key.toString('utf8'),
    value: message.value === null ? null : message.value.toString('utf8'),
    headers: message.headers ?? {},
    timestamp: message.timestamp,
    raw: message,
  }
}

/** Collects consumed messages; `waitForCount(n)` resolves when at least n were seen. */
export class Collector {
  readonly messages: Received[] = []
  private waiters: { n: number; resolve: () => void }[] = []

  /** An eachMessage handler that records every message. */
  readonly eachMessage = async ({ topic, partition, message }: EachMessagePayload): Promise<void> => {
    this.push(toReceived(topic, partition, message))
  }

  push(...items: Received[]): void {
    this.messages.push(...items)
    this.waiters = this.waiters.filter((w) => {
      if (this.messages.length < w.n) return true
      w.resolve()
      return false
    })
  }

  async waitForCount(n: number, timeout = 30_000): Promise<Received[]> {
    if (this.messages.length < n) {
      let resolve!: () => void
      const reached = new Promise<void>((r) => (resolve = r))
      this.waiters.push({ n, resolve })
      let timer: NodeJS.Timeout | undefined
      const expired = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${timeout} ms: ${this.messages.length}/${n} messages`)), timeout)
      })
      try {
        await Promise.race([reached, expired])
      } finally {
        clearTimeout(timer)
      }
    }
    return this.messages.slice()
  }

  values(): (string | null)[] {
    return this.messages.map((m) => m.value)
  }

  byPartition(): Map<number, Received[]> {
    const out = new Map<number, Received[]>()
    for (const m of this.messages) out.set(m.partition, [...(out.get(m.partition) ?? []), m])
    return out
  }
}

/** `n` messages `{key, value}` with values `${prefix}-0`..; keys cycle over `keys` when given. */
export function messages(n: number, prefix = 'm', keys?: string[]): { key: string | null; value: string }[] {
  return Array.from({ length: n }, (_, i) => ({
    key: keys ? keys[i % keys.length]! : null,
    value: `${prefix}-${i}`,
  }))
}
