import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

/** A group's current generation, as its leader wrote it. */
export interface GenerationRow {
  generation: number
  leaderId: string | null
  protocol: string | null
  /** what the leader computed this generation for (members, subscriptions, partition counts) */
  memberKey: string | null
  /** member id -> base64 of its MemberAssignment bytes */
  assignment: Record<string, string>
}

export interface NewGeneration {
  group: string
  /** the generation the leader read: the write happens only if it is still the current one */
  seen: number
  leaderId: string
  protocol: string
  memberKey: string
  assignment: Record<string, string>
}

const sql = statements('groupGeneration', (t) => ({
  read: `
    SELECT generation::int8 AS generation, leader_id AS "leaderId", protocol, member_key AS "memberKey", assignment
    FROM ${t.groupGeneration} WHERE consumer_group = $1`,
  // The next generation, only if nobody wrote one since the leader read $2 (two members that both believe they
  // lead cannot both win); the group is woken at commit to take it.
  write: `
    WITH w AS (
      INSERT INTO ${t.groupGeneration} AS g (consumer_group, generation, leader_id, protocol, member_key, assignment, updated_at)
      VALUES ($1, $2 + 1, $3, $4, $5, $6::jsonb, now())
      ON CONFLICT (consumer_group) DO UPDATE
        SET generation = g.generation + 1, leader_id = EXCLUDED.leader_id, protocol = EXCLUDED.protocol,
            member_key = EXCLUDED.member_key, assignment = EXCLUDED.assignment, updated_at = now()
        WHERE g.generation = $2
      RETURNING generation::int8 AS generation
    )
    SELECT w.generation, pg_notify($7, 'g:' || $1) FROM w`,
}))

export async function readGeneration(db: Queryable, t: Tables, group: string): Promise<GenerationRow | null> {
  const row = (await run<GenerationRow & { generation: string }>(db, sql(t).read, [group])).rows[0]
  return row ? { ...row, generation: Number(row.generation) } : null
}

/** Writes the next generation; null when another leader wrote one first. */
export async function writeGeneration(db: Queryable, t: Tables, g: NewGeneration): Promise<number | null> {
  const res = await run<{ generation: string }>(db, sql(t).write, [
    g.group,
    g.seen,
    g.leaderId,
    g.protocol,
    g.memberKey,
    JSON.stringify(g.assignment),
    t.notifyChannel,
  ])
  return res.rows[0] ? Number(res.rows[0].generation) : null
}
