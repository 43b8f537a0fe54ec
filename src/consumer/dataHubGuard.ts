import type { Logger } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { protocolError } from '../kafkajs/protocolErrors.js'
import { DATAHUB_POLL_WINDOW_MS, type DataHubPresence } from '../store/dataHubMembers.js'

/** how often a joining member looks again at DataHub consumers that seem to have stopped */
const HANDOVER_POLL_MS = 500

export interface DataHubGuardOptions {
  logger: Logger
  /** a member not in the group yet (its first beat): it may wait for DataHub consumers that stopped to be gone */
  joining: boolean
  /** false once the consumer stops: the wait ends */
  wanted: () => boolean
}

/**
 * One group cannot be consumed by DataHub's own consumers and ours at once: DataHub leases single messages and
 * ignores our partition leases, we lease partitions and ignore its message leases, so both would process the same
 * messages. Rather than honour DataHub's per-message protocol on every fetch, a member refuses the group (at join
 * and at every heartbeat after) with Kafka's INCONSISTENT_GROUP_PROTOCOL, naming it. docs/compatibility.md,
 * "Sharing with DataHub".
 *
 * A handover is not a share: a member joining a group whose DataHub consumers stopped seconds ago finds their
 * registration (fresh for 30 s) or a lease (until its visibility timeout) that no longer moves. It waits, saying
 * once what for and until when, and joins when the evidence lapses; evidence that moves meanwhile (DataHub polled
 * again, took another lease) is a live consumer, and the group is refused (decision datahub-007, amendment).
 */
export async function refuseGroupSharedWithDataHub(ctx: PgQueueContext, groupId: string, topicIds: string[], o: DataHubGuardOptions): Promise<void> {
  const find = () => ctx.store.dataHubMembers.findDataHubPresence(groupId, topicIds)
  const first = await find()
  if (first.length === 0) return
  if (!o.joining) throw protocolError('INCONSISTENT_GROUP_PROTOCOL', describe(groupId, first[0]))
  let told = false
  for (let found = first; found.length > 0; found = await find()) {
    const moved = found.find((p) => !first.some((q) => q.kind === p.kind && q.detail === p.detail && q.at === p.at))
    if (moved) throw protocolError('INCONSISTENT_GROUP_PROTOCOL', describe(groupId, moved))
    if (!told) {
      told = true
      o.logger.warn('Waiting for the DataHub consumers of this group to be gone before joining', {
        groupId,
        waitingFor: found.map(evidence).join('; '),
        until: found.map(lapsesAt).reduce((a, b) => (a > b ? a : b)),
      })
    }
    await new Promise((r) => setTimeout(r, HANDOVER_POLL_MS))
    if (!o.wanted()) return
  }
  o.logger.info('The DataHub consumers of this group are gone; joining', { groupId })
}

/** When a presence stops counting: a lease at its end, a registration one poll window after DataHub's last poll. */
function lapsesAt(p: DataHubPresence): string {
  // PostgreSQL's text form ("2026-12-03 08:40:00.12+00") as ISO 8601
  const at = new Date(p.at.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'))
  if (Number.isNaN(at.getTime())) return p.at
  return new Date(at.getTime() + (p.kind === 'lease' ? 0 : DATAHUB_POLL_WINDOW_MS)).toISOString()
}

function evidence(p: DataHubPresence): string {
  return p.kind === 'lease'
    ? `DataHub consumer ${p.detail} holds a message lease until ${p.at}`
    : `a DataHub consumer polled topic ${p.detail} at ${p.at}`
}

function describe(groupId: string, p: DataHubPresence): string {
  return (
    `group ${JSON.stringify(groupId)} is consumed by DataHub's own pgQueue consumers (${evidence(p)}); a group cannot be ` +
    `shared with them: use another groupId, or stop them (a lease lapses at its visibility timeout, a registration ` +
    `${DATAHUB_POLL_WINDOW_MS / 1000} s after DataHub's last poll)`
  )
}
