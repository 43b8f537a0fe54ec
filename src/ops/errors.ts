import { classifyPgError } from '../db/pgErrors.js'

/** A failure the operations API reports with an HTTP status (400 bad input, 404 unknown topic, 503 no store). */
export class OpsError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
    this.name = 'OpsError'
  }
}

export const badRequest = (message: string): never => {
  throw new OpsError(400, message)
}

/** HTTP status for any error thrown by an operation: ours carry one, lost databases are 503, the rest 500. */
export function statusOf(err: unknown): number {
  if (err instanceof OpsError) return err.status
  if ((err as { type?: string } | null)?.type === 'UNKNOWN_TOPIC_OR_PARTITION') return 404
  if (classifyPgError(err) === 'connection') return 503
  return 500
}
