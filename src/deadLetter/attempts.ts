import type { Queryable } from '../db/database.js'
import type { Kafka as PgQueueKafka } from '../kafka.js'
import type { AttemptKey, FailingMessage } from '../store/deliveryAttempts.js'
import { storeFor } from '../store/handle.js'

export type { AttemptKey, FailingMessage }

/** Failed attempts per message of one group: where the count survives (or not) a restart, and where a move is marked. */
export interface AttemptLog {
  /** failures recorded so far */
  read(key: AttemptKey): Promise<{ attempts: number }>
  failed(key: AttemptKey, attempts: number, error: string): Promise<void>
  /** the message got through: its count goes */
  forget(key: AttemptKey): Promise<void>
  /** the message was moved: its count goes (on pgQueue the move's claim marked its row, swept later by maintenance) */
  moved(key: AttemptKey): void
  /**
   * pgQueue: in the move's transaction, marks the message moved; false when it was moved already or the group is
   * past it (the move must not happen). Absent on Kafka, where nothing can join the move's transaction.
   */
  claim?(db: Queryable, key: AttemptKey, attempts: number, error: string): Promise<boolean>
  /** whether the group is done with the message (moved, or committed past): looked up after a move whose outcome is unknown */
  done(key: AttemptKey): Promise<boolean>
  close(): Promise<void>
}

const id = (k: AttemptKey) => `${k.group}\u0000${k.topic}\u0000${k.partition}\u0000${k.offset}`

/** Kafka: counts kept by this process; a restarted consumer starts a message's count again. */
export function memoryAttempts(): AttemptLog {
  const counts = new Map<string, number>()
  return {
    read: async (k) => ({ attempts: counts.get(id(k)) ?? 0 }),
    failed: async (k, attempts) => void counts.set(id(k), attempts),
    forget: async (k) => void counts.delete(id(k)),
    moved: (k) => void counts.delete(id(k)),
    done: async () => false,
    close: async () => counts.clear(),
  }
}

/** pgQueue: counts stored with the group (table delivery_attempt), so they survive a crash or a rebalance. */
export async function storedAttempts(kafka: PgQueueKafka): Promise<AttemptLog> {
  const opened = await kafka.database()
  const store = storeFor(opened).deliveryAttempts
  return {
    read: (k) => store.readAttempts(k),
    failed: (k, attempts, error) => store.recordAttempts(k, attempts, error),
    forget: (k) => store.clearAttempts(k),
    moved: () => {},
    claim: (db, k, attempts, error) => storeFor(opened, db).deliveryAttempts.claimMove(k, attempts, error),
    done: (k) => store.isDone(k),
    close: opened.release,
  }
}

/**
 * pgQueue: the messages failing right now (retried in place, not yet dead-lettered), with their attempt count and
 * last error. On Kafka the counts live in the consumer's process and cannot be listed.
 */
export async function readFailingMessages(
  kafka: PgQueueKafka,
  { group, topic, limit = 1000 }: { group?: string; topic?: string; limit?: number } = {},
): Promise<FailingMessage[]> {
  const opened = await kafka.database()
  try {
    return await storeFor(opened).deliveryAttempts.listAttempts({ group, topic, limit })
  } finally {
    await opened.release()
  }
}
