import type { DeleteGroupsResult, GroupDescription, GroupOverview } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { describeGroups as describeStoredGroups } from '../client/groupDescription.js'
import { KafkaJSDeleteGroupsError, KafkaJSNonRetriableError, type KafkaJSProtocolError } from '../kafkajs/errors.js'
import { validateGroupId } from '../kafkajs/messageValidation.js'
import { protocolError } from '../kafkajs/protocolErrors.js'

/** Every group with members, offsets or DataHub registrations; all are consumer groups. */
export async function listGroups(ctx: PgQueueContext): Promise<{ groups: GroupOverview[] }> {
  const ids = await ctx.store.members.listGroupIds()
  return { groups: ids.map((groupId) => ({ groupId, protocolType: 'consumer' })) }
}

/** As Kafka: a group with no trace at all is reported 'Dead' (no protocol type), not as an error. */
export async function describeGroups(ctx: PgQueueContext, groupIds: string[]): Promise<{ groups: GroupDescription[] }> {
  if (!Array.isArray(groupIds)) throw new KafkaJSNonRetriableError(`Invalid groupIds array ${groupIds}`)
  groupIds.forEach((id) => validateGroupId(id))
  const known = new Set(await ctx.store.members.listGroupIds())
  const groups = (await describeStoredGroups(ctx, groupIds)).map((description) =>
    description.state === 'Empty' && !known.has(description.groupId)
      ? ({ groupId: description.groupId, members: [], protocol: '', protocolType: '', state: 'Dead', errorCode: 0 } as GroupDescription)
      : description,
  )
  return { groups }
}

type DeleteFailure = { groupId: string; errorCode: number; error: KafkaJSProtocolError }

/**
 * Deletes each group that has no live members (its offsets, registrations, leases and expired members go with it).
 * Like KafkaJS: resolves with [{groupId, errorCode: 0}] when all succeed, else rejects with a KafkaJSDeleteGroupsError
 * listing the failures (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND); the other groups are deleted regardless.
 */
export async function deleteGroups(ctx: PgQueueContext, groupIds: string[]): Promise<DeleteGroupsResult[]> {
  if (!groupIds || !Array.isArray(groupIds)) throw new KafkaJSNonRetriableError(`Invalid groupIds array ${groupIds}`)
  const invalid = groupIds.some((g) => typeof g !== 'string')
  // sic: KafkaJS prints the result of .some(), i.e. "true"
  if (invalid) throw new KafkaJSNonRetriableError(`Invalid groupId name: ${JSON.stringify(invalid)}`)
  groupIds.forEach((id) => validateGroupId(id))
  if (groupIds.length === 0) return []
  const known = new Set(await ctx.store.members.listGroupIds())
  const results: DeleteGroupsResult[] = []
  const failures: DeleteFailure[] = []
  for (const groupId of groupIds) {
    const fail = (type: 'NON_EMPTY_GROUP' | 'GROUP_ID_NOT_FOUND') => {
      const error = protocolError(type)
      failures.push({ groupId, errorCode: error.code, error })
    }
    if (!known.has(groupId)) fail('GROUP_ID_NOT_FOUND')
    else if ((await ctx.store.members.liveMembers(groupId)).length > 0) fail('NON_EMPTY_GROUP')
    else {
      await ctx.store.members.deleteGroup(groupId)
      results.push({ groupId, errorCode: 0 })
    }
  }
  if (failures.length > 0) throw new KafkaJSDeleteGroupsError('Error in DeleteGroups', failures)
  return results
}
