// `migrate-transport`: moves topics, their retained messages and every group's committed offsets from pgQueue to
// Kafka or from Kafka to pgQueue (docs/moving-to-kafka.md). Per topic: plan, create the destination topic, copy
// (resumable through the state file), translate and write the groups' offsets, verify. A dry run plans only.
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { copyTopic } from './copy.js'
import type { Endpoint } from './endpoints.js'
import { sourceGroupOffsets, writeGroupOffsets, type GroupOffsets } from './groups.js'
import { planTopic, projectedCopy } from './plan.js'
import type { Progress } from './progress.js'
import { loadState, saveState, type MigrationState } from './state.js'
import { verifyGroups, verifyMessages, type GroupCheck, type PartitionCheck } from './verify.js'

export { openEndpoint, type Endpoint } from './endpoints.js'
export { progressBar } from './progress.js'

export interface MigrateOptions {
  from: Endpoint
  to: Endpoint
  topics: string[]
  stateFile: string
  dryRun?: boolean
  verify?: boolean
  /** only these groups' offsets (default: every group with an offset on the topic) */
  groups?: string[]
  progress?: Progress
}

export interface TopicReport {
  topic: string
  partitions: number
  configEntries: Array<{ name: string; value: string }>
  created: boolean
  /** copied by this run (planned, on a dry run) */
  messages: number
  /** copied by every run of this state file */
  totalCopied: number
  groups: GroupOffsets[]
}

export interface MigrationReport {
  dryRun: boolean
  topics: TopicReport[]
  messages: number
  seconds: number
  messagesPerSecond: number
  verification?: { partitions: PartitionCheck[]; groups: GroupCheck[]; ok: boolean }
}

export async function migrateTransport(o: MigrateOptions): Promise<MigrationReport> {
  if (o.from.backend === o.to.backend)
    throw new KafkaJSNonRetriableError(`migrate-transport copies between pgqueue and kafka, not ${o.from.backend} to itself`)
  const startedAt = Date.now()
  const state: MigrationState = (await loadState(o.stateFile)) ?? { version: 1, from: o.from.backend, to: o.to.backend, topics: {} }
  if (state.from !== o.from.backend || state.to !== o.to.backend) {
    throw new KafkaJSNonRetriableError(
      `${o.stateFile} belongs to a ${state.from} -> ${state.to} migration; use another --state file for ${o.from.backend} -> ${o.to.backend}`,
    )
  }
  const save = () => (o.dryRun ? Promise.resolve() : saveState(o.stateFile, state))
  const topics: TopicReport[] = []
  const checks: { partitions: PartitionCheck[]; groups: GroupCheck[] } = { partitions: [], groups: [] }
  let messages = 0
  for (const topic of o.topics) {
    const plan = await planTopic(o.from, o.to, topic, state.topics[topic])
    const report: TopicReport = {
      topic,
      partitions: plan.state.numPartitions,
      configEntries: plan.state.configEntries,
      created: plan.create,
      messages: plan.toCopy,
      totalCopied: 0,
      groups: [],
    }
    if (o.dryRun) {
      report.groups = await sourceGroupOffsets(o.from, projectedCopy(plan.state), o.groups)
      topics.push(report)
      continue
    }
    if (plan.create) {
      await o.to.admin.createTopics({
        waitForLeaders: true,
        topics: [{ topic, numPartitions: plan.state.numPartitions, configEntries: plan.state.configEntries }],
      })
    }
    state.topics[topic] = plan.state
    await save()
    o.progress?.start(topic, plan.toCopy)
    await copyTopic(o.from, o.to, plan.state, { saved: save, progress: (_p, n) => o.progress?.advance(n) })
    o.progress?.finish()
    messages += plan.toCopy
    report.groups = await sourceGroupOffsets(o.from, plan.state, o.groups)
    await writeGroupOffsets(o.to.admin, topic, report.groups)
    report.totalCopied = plan.state.partitions.reduce((n, p) => n + p.copied, 0)
    topics.push(report)
    if (o.verify !== false) {
      checks.partitions.push(...(await verifyMessages(o.to, plan.state, o.from.backend === 'pgqueue')))
      checks.groups.push(...(await verifyGroups(o.to, topic, report.groups)))
    }
  }
  const seconds = (Date.now() - startedAt) / 1000
  const result: MigrationReport = {
    dryRun: o.dryRun ?? false,
    topics,
    messages,
    seconds,
    messagesPerSecond: Math.round(messages / Math.max(seconds, 0.001)),
  }
  if (!o.dryRun && o.verify !== false) result.verification = { ...checks, ok: [...checks.partitions, ...checks.groups].every((c) => c.ok) }
  return result
}
