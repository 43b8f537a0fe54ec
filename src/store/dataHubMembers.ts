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

// Nothing of ours writes message_group_lease (our leases are per partition), so a live lease there other than
// DataHub's markers is a DataHub consumer at work; the index on (consumer_group, locked_until) finds it without
// reading the __acked__ markers (locked_until 1970). Our heartbeat sets library_heartbeat_at with
// last_heartbeat_at, so a later last_heartbeat_at was written by DataHub's poll loop, unless a member's heartbeat_at
// equals it: the one statement of a member running a version from before library_heartbeat_at (a rolling upgrade).
// Every member runs this at every heartbeat. Which topic a lease is on is only in the message table, partitioned
// by time: a statement that joins it is planned over every time partition (14 ms at 73 of them, each of a
// backend's first six runs; 0.5 to 1 ms cached). So the common case asks only whether the group has any live
// lease at all, beside the registrations, and the join runs only when it has.
const LIVE_LEASE = `l.consumer_group = $1 AND l.locked_until > now() AND l.lock_owner NOT IN ('__acked__', '__released__')`
const sql = statements('datahubMembers', (t) => ({
  registrations: `
    (SELECT 'registration' AS kind, t.topic_name AS detail, r.last_heartbeat_at::text AS at
     FROM ${t.consumerRegistration} r JOIN ${t.topic} t ON t.id = r.topic_id
     WHERE r.consumer_group = $1 AND r.topic_id = ANY($2::int8[])
       AND r.last_heartbeat_at > now() - $3 * interval '1 millisecond'
       AND r.last_heartbeat_at > COALESCE(r.library_heartbeat_at, '-infinity')
       AND NOT EXISTS (SELECT 1 FROM ${t.groupMember} gm WHERE gm.consumer_group = $1 AND gm.heartbeat_at = r.last_heartbeat_at)
     LIMIT 1)
    UNION ALL
    SELECT 'leased', NULL, NULL WHERE EXISTS (SELECT 1 FROM ${t.messageGroupLease} l WHERE ${LIVE_LEASE})`,
  leases: `
    SELECT 'lease' AS kind, l.lock_owner AS detail, l.locked_until::text AS at
    FROM ${t.messageGroupLease} l
    JOIN ${t.message} m ON m.id = l.message_id AND m.enqueued_at = l.message_enqueued_at
    WHERE ${LIVE_LEASE} AND m.topic_id = ANY($2::int8[])
    LIMIT 1`,
}))

/** Evidence that DataHub's own consumers consume `group` on any of these topics (empty when there is none). */
export async function findDataHubPresence(db: Queryable, t: Tables, group: string, topicIds: string[]): Promise<DataHubPresence[]> {
  if (topicIds.length === 0) return []
  const found = (await run<DataHubPresence | { kind: 'leased' }>(db, sql(t).registrations, [group, topicIds, DATAHUB_POLL_WINDOW_MS])).rows
  const registrations = found.filter((p): p is DataHubPresence => p.kind === 'registration')
  if (registrations.length === found.length) return registrations
  const leases = (await run<DataHubPresence>(db, sql(t).leases, [group, topicIds])).rows
  return [...leases, ...registrations]
}
