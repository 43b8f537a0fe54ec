import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

const sql = statements('server', () => ({
  version: `SELECT current_setting('server_version_num')::int AS version`,
}))

/**
 * The server's version number: the round trip a client's connect() makes, as KafkaJS's connect negotiates API
 * versions with the broker (ApiVersions), so a connect also proves the server answers.
 */
export async function serverVersion(db: Queryable, t: Tables): Promise<number> {
  const res = await run<{ version: number }>(db, sql(t).version, [])
  return res.rows[0]!.version
}
