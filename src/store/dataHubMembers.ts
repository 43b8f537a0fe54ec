import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

/** How recently DataHub's poll loop must have refreshed a registration for its consumer to count as present. */
export const DATAHUB_POLL_WINDOW_MS = 30_000

/** What shows a DataHub consumer in a group: a live per-message lease it holds, or a registration it refreshed. */
export interface DataHubPresence {
  kind: 'lease' | 'registration'
  /** the lease's lock owner (`{group}:{uuid}`), or the registered topic */
  detail: string
  /** until when the lease holds, or when DataHub last polled (ISO 8601) */
  at: string
}

const sql = statements('datahubMembers', (t) => ({
  // Nothing of ours writes message_group_lease (our leases are per partition), so a live lease there other than
  // DataHub's markers is a DataHub consumer at work; the index on (consumer_group, locked_until) finds it without
  // reading the __acked__ markers (locked_until 1970). Our heartbeat sets library_heartbeat_at with
  // last_heartbeat_at, so a later last_heartbeat_at was written by DataHub's poll loop, unless a member's heartbeat_at
  // equals it: the one statement of a member running a version from before library_heartbeat_at (a rolling upgrade).
  find: `
    (SELECT 'lease' AS kind, l.lock_owner AS detail, l.locked_until::text AS at
     FROM ${t.messageGroupLease} l
     JOIN ${t.message} m ON m.id = l.message_id AND m.enqueued_at = l.message_enqueued_at
     WHERE l.consumer_group = $1 AND l.locked_until > now() AND l.lock_owner NOT IN ('__acked__', '__released__')
       AND m.topic_id = ANY($2::int8[])
     LIMIT 1)
    UNION ALL
    (SELECT 'registration', t.topic_name, r.last_heartbeat_at::text
     FROM ${t.consumerRegistration} r JOIN ${t.topic} t ON t.id = r.topic_id
     WHERE r.consumer_group = $1 AND r.topic_id = ANY($2::int8[])
       AND r.last_heartbeat_at > now() - $3 * interval '1 millisecond'
       AND r.last_heartbeat_at > COALESCE(r.library_heartbeat_at, '-infinity')
       AND NOT EXISTS (SELECT 1 FROM ${t.groupMember} gm WHERE gm.consumer_group = $1 AND gm.heartbeat_at = r.last_heartbeat_at)
     LIMIT 1)`,
}))

/** Evidence that DataHub's own consumers consume `group` on any of these topics (empty when there is none). */
export async function findDataHubPresence(db: Queryable, t: Tables, group: string, topicIds: string[]): Promise<DataHubPresence[]> {
  if (topicIds.length === 0) return []
  return (await run<DataHubPresence>(db, sql(t).find, [group, topicIds, DATAHUB_POLL_WINDOW_MS])).rows
}
