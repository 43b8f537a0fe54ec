import type { TopicPartitions } from 'kafkajs'

/** Paused topics (all partitions) and topic-partitions, as KafkaJS's pause / resume / paused see them. */
export class PauseRegistry {
  private readonly wholeTopics = new Set<string>()
  private readonly partitions = new Map<string, Set<number>>()

  pause(entries: Array<{ topic: string; partitions?: number[] }>): void {
    for (const { topic, partitions } of entries) {
      if (!partitions) this.wholeTopics.add(topic)
      else {
        const set = this.partitions.get(topic) ?? new Set<number>()
        partitions.forEach((p) => set.add(p))
        this.partitions.set(topic, set)
      }
    }
  }

  resume(entries: Array<{ topic: string; partitions?: number[] }>): void {
    for (const { topic, partitions } of entries) {
      if (!partitions) {
        this.wholeTopics.delete(topic)
        this.partitions.delete(topic)
      } else {
        const set = this.partitions.get(topic)
        partitions.forEach((p) => set?.delete(p))
        if (set?.size === 0) this.partitions.delete(topic)
      }
    }
  }

  isPaused(topic: string, partition: number): boolean {
    return this.wholeTopics.has(topic) || (this.partitions.get(topic)?.has(partition) ?? false)
  }

  /** `consumer.paused()`: whole topics list the partitions the member currently holds. */
  list(held: Array<{ topic: string; partition: number }>): TopicPartitions[] {
    const out = new Map<string, Set<number>>()
    for (const [topic, set] of this.partitions) out.set(topic, new Set(set))
    for (const { topic, partition } of held) {
      if (this.wholeTopics.has(topic)) (out.get(topic) ?? out.set(topic, new Set()).get(topic)!).add(partition)
    }
    return [...out].map(([topic, set]) => ({ topic, partitions: [...set].sort((a, b) => a - b) }))
  }
}
