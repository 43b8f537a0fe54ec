import kafkajs from '../kafkajs/upstream.js'
import type { DeleteGroupsResult, GroupDescription, GroupOverview } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { KafkaJSDeleteGroupsError, KafkaJSNonRetriableError, type KafkaJSProtocolError } from '../kafkajs/errors.js'
import { validateGroupId } from '../kafkajs/messageValidation.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import { deleteGroup, listGroupIds, liveMembers } from '../store/members.js'
import { readGeneration } from '../store/groupGeneration.js'

/**
 * KafkaJS's GroupDescription from the members table and the group's current generation: each member's protocol
 * metadata and the assignment its leader wrote, as the KafkaJS AssignerProtocol bytes Kafka would return.
 */
export async function describeGroup(ctx: PgQueueContext, groupId: string): Promise<GroupDescription> {
  const db = ctx.db
  const members = await liveMembers(db.pool, db.tables, groupId)
  if (members.length === 0) {
    return { groupId, members: [], protocol: '', protocolType: 'consumer', state: 'Empty', errorCode: 0 } as GroupDescription
  }
  const generation = await readGeneration(db.pool, db.tables, groupId)
  const protocol = generation?.protocol ?? ''
  const stable = members.every((m) => generation?.assignment[m.memberId] !== undefined)
  const empty = kafkajs.AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: {}, userData: Buffer.alloc(0) })
  return {
    groupId,
    protocol,
    protocolType: 'consumer',
    state: stable ? 'Stable' : 'PreparingRebalance',
    errorCode: 0,
    members: members.map((m) => {
      const offered = m.protocols.find((p) => p.name === protocol) ?? m.protocols[0]
      const assigned = generation?.assignment[m.memberId]
      return {
        memberId: m.memberId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        memberMetadata: offered
          ? Buffer.from(offered.metadata, 'base64')
          : kafkajs.AssignerProtocol.MemberMetadata.encode({ version: 0, topics: m.topics, userData: Buffer.alloc(0) }),
        memberAssignment: assigned ? Buffer.from(assigned, 'base64') : empty,
      }
    }),
  } as GroupDescription
}

/** Every group with members, offsets or DataHub registrations; all are consumer groups. */
export async function listGroups(ctx: PgQueueContext): Promise<{ groups: GroupOverview[] }> {
  const ids = await listGroupIds(ctx.db.pool, ctx.tables)
  return { groups: ids.map((groupId) => ({ groupId, protocolType: 'consumer' })) }
}

/** As Kafka: a group with no trace at all is reported 'Dead' (no protocol type), not as an error. */
export async function describeGroups(ctx: PgQueueContext, groupIds: string[]): Promise<{ groups: GroupDescription[] }> {
  if (!Array.isArray(groupIds)) throw new KafkaJSNonRetriableError(`Invalid groupIds array ${groupIds}`)
  groupIds.forEach((id) => validateGroupId(id))
  const known = new Set(await listGroupIds(ctx.db.pool, ctx.tables))
  const groups: GroupDescription[] = []
  for (const groupId of groupIds) {
    const description = await describeGroup(ctx, groupId)
    groups.push(
      description.state === 'Empty' && !known.has(groupId)
        ? ({ groupId, members: [], protocol: '', protocolType: '', state: 'Dead', errorCode: 0 } as GroupDescription)
        : description,
    )
  }
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
  const db = ctx.db
  const known = new Set(await listGroupIds(db.pool, db.tables))
  const results: DeleteGroupsResult[] = []
  const failures: DeleteFailure[] = []
  for (const groupId of groupIds) {
    const fail = (type: 'NON_EMPTY_GROUP' | 'GROUP_ID_NOT_FOUND') => {
      const error = protocolError(type)
      failures.push({ groupId, errorCode: error.code, error })
    }
    if (!known.has(groupId)) fail('GROUP_ID_NOT_FOUND')
    else if ((await liveMembers(db.pool, db.tables, groupId)).length > 0) fail('NON_EMPTY_GROUP')
    else {
      await deleteGroup(db.pool, db.tables, groupId)
      results.push({ groupId, errorCode: 0 })
    }
  }
  if (failures.length > 0) throw new KafkaJSDeleteGroupsError('Error in DeleteGroups', failures)
  return results
}
