import type pg from 'pg'

/**
 * Runs `work` on `client` with statement_timeout off, then back to the session's startup value (the pool's, which
 * KafkaJS's requestTimeout may have set): for setup that is not a client's request (schema check, migration,
 * partition upkeep). A failure leaves the setting unknown, so the caller should discard the client.
 */
export async function withoutStatementTimeout<T>(client: pg.PoolClient, work: () => Promise<T>): Promise<T> {
  await client.query('SET statement_timeout = 0')
  const result = await work()
  await client.query('RESET statement_timeout')
  return result
}
