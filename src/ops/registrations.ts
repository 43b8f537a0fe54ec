// DataHub's consumer registrations (`GET/PUT/DELETE /consumers`). Our consumers refresh their group's rows on every
// heartbeat, so deleting the row of a running group only lasts until its next beat; maintenance expires silent ones.
import type { PgQueueContext } from '../client/context.js'
import { type RegistrationRow } from '../store/registrations.js'
import { OpsError, badRequest } from './errors.js'

export type Registration = RegistrationRow

export interface RegistrationKey {
  group: string
  topic: string
}

function checkName(what: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || value.trim() === '') badRequest(`${what} must be a non-empty string`)
}

async function requireTopic(ctx: PgQueueContext, topic: string): Promise<void> {
  if ((await ctx.store.topics.findTopics([topic])).length === 0) throw new OpsError(404, `Unknown topic "${topic}"`)
}

/** Every registration, by group then topic; only one topic's when given (404 when it does not exist). */
export async function listRegistrations(ctx: PgQueueContext, filter: { topic?: string } = {}): Promise<Registration[]> {
  if (filter.topic !== undefined) {
    checkName('topic', filter.topic)
    await requireTopic(ctx, filter.topic)
  }
  return ctx.store.registrations.listRegistrations(filter.topic ?? null)
}

/** Registers (or re-beats) a group on a topic, as DataHub's poll loop does. */
export async function registerConsumer(ctx: PgQueueContext, key: RegistrationKey): Promise<{ registered: true }> {
  checkName('group', key?.group)
  checkName('topic', key?.topic)
  if (!(await ctx.store.registrations.upsertRegistration(key.group, key.topic))) {
    throw new OpsError(404, `Unknown topic "${key.topic}"`)
  }
  return { registered: true }
}

export async function unregisterConsumer(ctx: PgQueueContext, key: RegistrationKey): Promise<{ deleted: boolean }> {
  checkName('group', key?.group)
  checkName('topic', key?.topic)
  await requireTopic(ctx, key.topic)
  return { deleted: await ctx.store.registrations.deleteRegistration(key.group, key.topic) }
}
