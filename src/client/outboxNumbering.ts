import type { Logger } from 'kafkajs'
import type { Database } from '../db/database.js'
import { numberOutbox, OUTBOX_STEP_TRANSACTIONS } from '../store/outboxStaging.js'

/** After a failed step (a lock timeout behind a DataHub producer, a lost connection): try again this much later. */
const RETRY_MS = 1_000
/** Without LISTEN, idle consumers ask for a step at most this often. */
const POLL_MS = 500

/**
 * This client's driver of the outbox numbering step (docs/decisions/outbox-010-staged-numbering.md): messages staged
 * by REPEATABLE READ / SERIALIZABLE transactions are numbered when a staging COMMIT's notification arrives, when the
 * LISTEN connection comes back, when an idle consumer polls without LISTEN, and by every maintenance run. Kicks
 * coalesce: one step runs at a time per client, and a kick during it runs the drain once more (what committed after
 * the running step's snapshot). Steps of several clients at once are safe (the step numbers each message once).
 */
export class OutboxNumbering {
  private running?: Promise<void>
  private again = false
  private retry?: NodeJS.Timeout
  private polledAt = -Infinity

  constructor(
    /** the open database, or undefined when this client is not connected */
    private readonly database: () => Database | undefined,
    private readonly logger: Logger,
  ) {}

  kick(): void {
    if (this.running) {
      this.again = true
      return
    }
    const db = this.database()
    if (!db) return
    clearTimeout(this.retry)
    this.retry = undefined
    this.running = this.drain(db).finally(() => {
      this.running = undefined
      if (this.again) {
        this.again = false
        this.kick()
      }
    })
  }

  /** An idle round of a consumer that does not listen: at most one kick per POLL_MS. */
  poll(): void {
    const now = performance.now()
    if (now - this.polledAt < POLL_MS) return
    this.polledAt = now
    this.kick()
  }

  /** Waits for the step in flight and cancels a pending retry (before the pool closes). */
  async stop(): Promise<void> {
    clearTimeout(this.retry)
    this.retry = undefined
    this.again = false
    await this.running
  }

  private async drain(db: Database): Promise<void> {
    try {
      while ((await numberOutbox(db.pool, db.tables)) === OUTBOX_STEP_TRANSACTIONS);
    } catch (err) {
      this.logger.warn('Numbering staged outbox messages failed; trying again', { error: (err as Error).message, retryInMs: RETRY_MS })
      this.retry = setTimeout(() => this.kick(), RETRY_MS)
      this.retry.unref()
    }
  }
}
