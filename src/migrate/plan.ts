// What a run will do for one topic: its partition count and explicit configs on the source, the source range of
// each partition (low watermark, or where a previous run stopped, up to the current high watermark) and what the
// destination already holds. A destination topic that exists must match the partition count and, unless this
// state file copied into it, be empty: offsets can only be translated when the copy owns the destination's log.
import { ConfigResourceTypes } from '../kafkajs/exports.js'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { watermarks, type Endpoint } from './endpoints.js'
import { EMPTY_CHECKSUM } from './checksum.js'
import type { PartitionState, TopicState } from './state.js'

export interface TopicPlan {
  state: TopicState
  /** the destination topic has to be created */
  create: boolean
  /** messages this run copies */
  toCopy: number
}

async function explicitConfigs(admin: Endpoint['admin'], topic: string): Promise<Array<{ name: string; value: string }>> {
  const { resources } = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }], includeSynonyms: false })
  return (resources[0]?.configEntries ?? [])
    .filter((e) => !e.isDefault && !e.readOnly && e.configValue !== null)
    .map((e) => ({ name: e.configName, value: e.configValue }))
}

export async function planTopic(from: Endpoint, to: Endpoint, topic: string, previous: TopicState | undefined): Promise<TopicPlan> {
  const metadata = await from.admin.fetchTopicMetadata({ topics: [topic] })
  const numPartitions = metadata.topics[0]!.partitions.length
  const source = await watermarks(from.admin, topic)
  const exists = (await to.admin.listTopics()).includes(topic)
  const destination = exists ? await watermarks(to.admin, topic) : undefined
  if (destination && destination.size !== numPartitions) {
    throw new KafkaJSNonRetriableError(
      `${topic}: the destination has ${destination.size} partitions, the source ${numPartitions}; offsets translate per partition, so the counts must match (delete the destination topic or create it with ${numPartitions})`,
    )
  }
  const partitions: PartitionState[] = []
  let toCopy = 0
  for (let partition = 0; partition < numPartitions; partition++) {
    const { low, high } = source.get(partition)!
    const dest = destination?.get(partition)
    const before = previous?.partitions.find((p) => p.partition === partition)
    if (!before && dest && dest.high > dest.low) {
      throw new KafkaJSNonRetriableError(
        `${topic}: partition ${partition} of the destination already holds ${dest.high - dest.low} messages and this state file did not write them; migrate into an empty topic`,
      )
    }
    const state: PartitionState = before
      ? { ...before, runs: before.runs.map((r) => [...r] as typeof r) }
      : {
          partition,
          sourceStart: low,
          sourceEnd: high,
          sourceNext: low,
          destinationStart: dest?.high ?? 0,
          destinationNext: dest?.high ?? 0,
          copied: 0,
          checksum: EMPTY_CHECKSUM,
          runs: [],
        }
    // a later run copies what was produced meanwhile (the tail of a live cut-over); retention may have moved on
    state.sourceEnd = high
    if (state.sourceNext < low) {
      throw new KafkaJSNonRetriableError(
        `${topic}: partition ${partition}: retention deleted source offsets ${state.sourceNext}..${low - 1} before they were copied`,
      )
    }
    toCopy += Math.max(0, high - state.sourceNext)
    partitions.push(state)
  }
  const configEntries = previous?.configEntries ?? (await explicitConfigs(from.admin, topic))
  return { state: { topic, numPartitions, configEntries, partitions }, create: !exists, toCopy }
}

/** The state as if the planned copy had been made (dense logs land one to one): what a dry run translates with. */
export function projectedCopy(state: TopicState): TopicState {
  return {
    ...state,
    partitions: state.partitions.map((p) => {
      const n = p.sourceEnd - p.sourceNext
      return { ...p, runs: n > 0 ? [...p.runs, [p.sourceNext, p.destinationNext, n]] : p.runs, destinationNext: p.destinationNext + n }
    }),
  }
}
