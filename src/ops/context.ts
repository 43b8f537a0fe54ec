import type { PgQueueContext } from '../client/context.js'
import { Kafka } from '../kafka.js'

/**
 * The PgQueueContext behind a pgQueue `Kafka` (what `createKafka` returns for DATAHUB_MESSAGING_TRANSPORT=pgqueue),
 * or undefined for a real KafkaJS client. Bracket access reaches the private field without widening Kafka's surface.
 */
export function contextOf(kafka: object): PgQueueContext | undefined {
  return kafka instanceof Kafka ? kafka['context'] : undefined
}

/**
 * Holds one reference on a context for the operations API: connects on first use and again after a failure (the
 * database may come back), so a server started while PostgreSQL is down reports DOWN instead of refusing to start.
 */
export class OpsSession {
  private acquired?: Promise<void>

  constructor(readonly ctx: PgQueueContext) {}

  async connect(): Promise<PgQueueContext> {
    this.acquired ??= this.ctx.acquire().then(
      () => undefined,
      (err: unknown) => {
        this.acquired = undefined
        throw err
      },
    )
    await this.acquired
    return this.ctx
  }

  async close(): Promise<void> {
    const held = this.acquired
    this.acquired = undefined
    if (
      held &&
      (await held.then(
        () => true,
        () => false,
      ))
    )
      await this.ctx.release()
  }
}
