import type { Queryable } from '../db/database.js'
import { quoteIdent } from '../db/identifiers.js'

/** Subscribes this connection to `channel` (the schema + prefix's notify channel); what wakes idle consumers. */
export async function listen(db: Queryable, channel: string): Promise<void> {
  await db.query(`LISTEN ${quoteIdent(channel)}`)
}
