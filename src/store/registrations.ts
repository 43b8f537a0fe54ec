import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { statements } from './statement.js'

/** DataHub's consumer_registration row, times in ms since the epoch (as DataHub's API returns them). */
export interface RegistrationRow {
  consumerGroup: string
  topicName: string
  registeredAt: number
  lastHeartbeatAt: number
}

const ms = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)::float8`

const sql = statements('registrations', (t) => ({
  list: `
    SELECT r.consumer_group AS "consumerGroup", t.topic_name AS "topicName",
           ${ms('r.registered_at')} AS "registeredAt", ${ms('r.last_heartbeat_at')} AS "lastHeartbeatAt"
    FROM ${t.consumerRegistration} r JOIN ${t.topic} t ON t.id = r.topic_id
    WHERE $1::text IS NULL OR t.topic_name = $1
    ORDER BY r.consumer_group, t.topic_name`,
  // the same upsert DataHub's poll loop runs as its heartbeat, marked as ours (an operator's registration is not a
  // DataHub consumer polling: see dataHubMembers.ts)
  register: `
    INSERT INTO ${t.consumerRegistration} (consumer_group, topic_id, library_heartbeat_at)
    SELECT $1, id, now() FROM ${t.topic} WHERE topic_name = $2
    ON CONFLICT (consumer_group, topic_id) DO UPDATE SET last_heartbeat_at = now(), library_heartbeat_at = now()
    RETURNING 1`,
  unregister: `
    DELETE FROM ${t.consumerRegistration} r USING ${t.topic} t
    WHERE t.id = r.topic_id AND r.consumer_group = $1 AND t.topic_name = $2
    RETURNING 1`,
}))

export async function listRegistrations(db: Queryable, t: Tables, topic: string | null): Promise<RegistrationRow[]> {
  return (await run<RegistrationRow>(db, sql(t).list, [topic])).rows
}

/** false when the topic does not exist */
export async function upsertRegistration(db: Queryable, t: Tables, group: string, topic: string): Promise<boolean> {
  return ((await run(db, sql(t).register, [group, topic])).rowCount ?? 0) > 0
}

export async function deleteRegistration(db: Queryable, t: Tables, group: string, topic: string): Promise<boolean> {
  return ((await run(db, sql(t).unregister, [group, topic])).rowCount ?? 0) > 0
}
