import type { PgQueueContext } from '../client/context.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import { DATAHUB_POLL_WINDOW_MS, type DataHubPresence } from '../store/dataHubMembers.js'

/**
 * One group cannot be consumed by DataHub's own consumers and ours at once: DataHub leases single messages and
 * ignores our partition leases, we lease partitions and ignore its message leases, so both would process the same
 * messages. Rather than honour DataHub's per-message protocol on every fetch, a member refuses the group (at join
 * and at every heartbeat after) with Kafka's INCONSISTENT_GROUP_PROTOCOL, naming it. docs/compatibility.md,
 * "Sharing with DataHub".
 */
export async function refuseGroupSharedWithDataHub(ctx: PgQueueContext, groupId: string, topicIds: string[]): Promise<void> {
  const found = await ctx.store.dataHubMembers.findDataHubPresence(groupId, topicIds)
  if (found.length > 0) throw protocolError('INCONSISTENT_GROUP_PROTOCOL', describe(groupId, found[0]))
}

function describe(groupId: string, p: DataHubPresence): string {
  const evidence =
    p.kind === 'lease' ? `DataHub consumer ${p.detail} holds a message lease until ${p.at}` : `a DataHub consumer polled topic ${p.detail} at ${p.at}`
  return (
    `group ${JSON.stringify(groupId)} is consumed by DataHub's own pgQueue consumers (${evidence}); a group cannot be ` +
    `shared with them: use another groupId, or stop them (a lease lapses at its visibility timeout, a registration ` +
    `${DATAHUB_POLL_WINDOW_MS / 1000} s after DataHub's last poll)`
  )
}
