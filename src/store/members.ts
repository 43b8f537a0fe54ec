import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import type { GenerationRow } from './groupGeneration.js'
import { statements } from './statement.js'

/** An assigner a member offers: its name and its protocol metadata (base64 of the bytes). */
export interface MemberProtocol {
  name: string
  metadata: string
}

export interface MemberRow {
  memberId: string
  clientId: string
  clientHost: string
  topics: string[]
  sessionTimeoutMs: number
  protocols: MemberProtocol[]
  /** ms since the epoch; the oldest live member leads the group */
  joinedAtMs: string
}

export interface Heartbeat {
  group: string
  memberId: string
  clientId: string
  clientHost: string
  topics: string[]
  /** subscribed topic ids: DataHub's consumer_registration rows are kept alive with the same beat */
  topicIds: string[]
  sessionTimeoutMs: number
  protocols: MemberProtocol[]
}

const MEMBER_COLUMNS = `member_id AS "memberId", client_id AS "clientId", client_host AS "clientHost", topics,
  session_timeout_ms AS "sessionTimeoutMs", protocols, (extract(epoch FROM joined_at) * 1000)::int8::text AS "joinedAtMs"`

const LIVE = `heartbeat_at > now() - session_timeout_ms * interval '1 millisecond'`

const sql = statements('members', (t) => ({
  // One round trip per heartbeat: upsert this member (re-joining if someone expired it: a member that was gone
  // joins again as the youngest), refresh DataHub's registrations (library_heartbeat_at tells our beats from
  // DataHub's: dataHubMembers.ts), drop members silent for three session timeouts, and return the live members.
  heartbeat: `
    WITH me AS (
      INSERT INTO ${t.groupMember} AS gm (consumer_group, member_id, client_id, client_host, topics, session_timeout_ms, protocols)
      VALUES ($1, $2, $3, $4, $5::text[], $6, $8::jsonb)
      ON CONFLICT (consumer_group, member_id) DO UPDATE
        SET heartbeat_at = now(), topics = EXCLUDED.topics, session_timeout_ms = EXCLUDED.session_timeout_ms,
            protocols = EXCLUDED.protocols,
            joined_at = CASE WHEN gm.heartbeat_at > now() - gm.session_timeout_ms * interval '1 millisecond'
                             THEN gm.joined_at ELSE now() END
      RETURNING (extract(epoch FROM joined_at) * 1000)::int8::text AS joined
    ), reg AS (
      INSERT INTO ${t.consumerRegistration} (consumer_group, topic_id, library_heartbeat_at)
      SELECT $1, unnest($7::int8[]), now()
      ON CONFLICT (consumer_group, topic_id) DO UPDATE SET last_heartbeat_at = now(), library_heartbeat_at = now()
    ), gone AS (
      DELETE FROM ${t.groupMember}
      WHERE consumer_group = $1 AND heartbeat_at < now() - 3 * session_timeout_ms * interval '1 millisecond'
    )
    SELECT ${MEMBER_COLUMNS} FROM ${t.groupMember}
    WHERE consumer_group = $1 AND member_id <> $2 AND ${LIVE}
    UNION ALL
    SELECT $2, $3, $4, $5::text[], $6, $8::jsonb, joined FROM me`,
  leave: `
    WITH gone AS (
      DELETE FROM ${t.groupMember} WHERE consumer_group = $1 AND member_id = $2
    ), leases AS (
      DELETE FROM ${t.partitionLease} WHERE consumer_group = $1 AND lock_owner = $3
    )
    SELECT pg_notify($4, 'g:' || $1)`,
  announce: `SELECT pg_notify($1, 'g:' || $2)`,
  live: `
    SELECT ${MEMBER_COLUMNS}, (extract(epoch FROM heartbeat_at) * 1000)::int8::text AS "heartbeatAtMs"
    FROM ${t.groupMember} WHERE consumer_group = $1 AND ${LIVE} ORDER BY member_id`,
  // The live members (as `live`) and the current generation (as groupGeneration's `read`) of many groups at once,
  // in the order asked: one round trip for a group list, and one snapshot for each group's two halves.
  describe: `
    SELECT g.id AS "groupId",
      COALESCE((
        SELECT json_agg(json_build_object(
          'memberId', member_id, 'clientId', client_id, 'clientHost', client_host, 'topics', topics,
          'sessionTimeoutMs', session_timeout_ms, 'protocols', protocols,
          'joinedAtMs', (extract(epoch FROM joined_at) * 1000)::int8::text,
          'heartbeatAtMs', (extract(epoch FROM heartbeat_at) * 1000)::int8::text) ORDER BY member_id)
        FROM ${t.groupMember} WHERE consumer_group = g.id AND ${LIVE}), '[]') AS members,
      CASE WHEN gen.consumer_group IS NOT NULL THEN json_build_object(
        'generation', gen.generation::int8, 'leaderId', gen.leader_id, 'protocol', gen.protocol,
        'memberKey', gen.member_key, 'assignment', gen.assignment) END AS generation
    FROM unnest($1::text[]) WITH ORDINALITY AS g(id, n)
    LEFT JOIN ${t.groupGeneration} gen ON gen.consumer_group = g.id
    ORDER BY g.n`,
  groups: `
    SELECT consumer_group AS "groupId" FROM ${t.groupMember}
    UNION SELECT consumer_group FROM ${t.consumerOffset}
    UNION SELECT consumer_group FROM ${t.consumerRegistration}
    ORDER BY 1`,
  deleteGroup: `
    WITH m AS (DELETE FROM ${t.groupMember} WHERE consumer_group = $1 RETURNING 1),
         o AS (DELETE FROM ${t.consumerOffset} WHERE consumer_group = $1 RETURNING 1),
         r AS (DELETE FROM ${t.consumerRegistration} WHERE consumer_group = $1 RETURNING 1),
         l AS (DELETE FROM ${t.partitionLease} WHERE consumer_group = $1 RETURNING 1),
         g AS (DELETE FROM ${t.groupGeneration} WHERE consumer_group = $1 RETURNING 1)
    SELECT (SELECT count(*) FROM m) + (SELECT count(*) FROM o) + (SELECT count(*) FROM r) AS deleted`,
}))

/** Beats for this member and returns the live members, this one included. */
export async function heartbeat(db: Queryable, t: Tables, hb: Heartbeat): Promise<MemberRow[]> {
  const res = await run<MemberRow>(db, sql(t).heartbeat, [
    hb.group,
    hb.memberId,
    hb.clientId,
    hb.clientHost,
    hb.topics,
    hb.sessionTimeoutMs,
    hb.topicIds,
    JSON.stringify(hb.protocols),
  ])
  return res.rows
}

/** Leaves the group and drops this member's partition leases; other members are woken to rebalance. */
export async function leaveGroup(db: Queryable, t: Tables, group: string, memberId: string, lockOwner: string): Promise<void> {
  await run(db, sql(t).leave, [group, memberId, lockOwner, t.notifyChannel])
}

/** Wakes the group's members so they re-read membership now rather than at their next heartbeat. */
export async function announceMembershipChange(db: Queryable, t: Tables, group: string): Promise<void> {
  await run(db, sql(t).announce, [t.notifyChannel, group])
}

/** A live member as admin and the console read it: with its last heartbeat. */
export interface LiveMemberRow extends MemberRow {
  /** ms since the epoch */
  heartbeatAtMs: string
}

export async function liveMembers(db: Queryable, t: Tables, group: string): Promise<LiveMemberRow[]> {
  return (await run<LiveMemberRow>(db, sql(t).live, [group])).rows
}

/** One group's live members and current generation, as liveMembers and readGeneration read them. */
export interface GroupState {
  groupId: string
  members: LiveMemberRow[]
  generation: GenerationRow | null
}

/** liveMembers and readGeneration of every group in `groups`, in one statement, in the order asked. */
export async function describeGroups(db: Queryable, t: Tables, groups: string[]): Promise<GroupState[]> {
  const { rows } = await run<GroupState>(db, sql(t).describe, [groups])
  return rows.map((r) => ({ ...r, generation: r.generation ? { ...r.generation, generation: Number(r.generation.generation) } : null }))
}

export async function listGroupIds(db: Queryable, t: Tables): Promise<string[]> {
  return (await run<{ groupId: string }>(db, sql(t).groups)).rows.map((r) => r.groupId)
}

/** Removes every trace of a group; the caller checks first that it has no live members. */
export async function deleteGroup(db: Queryable, t: Tables, group: string): Promise<number> {
  return Number((await run<{ deleted: string }>(db, sql(t).deleteGroup, [group])).rows[0].deleted)
}
