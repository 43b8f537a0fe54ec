import type { Database } from '../db/database.js'
import { storeFor } from '../store/handle.js'
import type { NewTopic, TopicRow } from '../store/topics.js'

/**
 * Topic rows by name, refreshed after metadataMaxAge so a partition count raised elsewhere is seen (DataHub caches
 * forever and never polls new partitions). Misses always go to the database. The cache is shared by the clients of
 * one Kafka, and each reads it with its own metadataMaxAge (KafkaJS keeps metadata per client). Ages are on the
 * monotonic clock: a wall-clock step back must not keep a stale partition count for the size of the step.
 */
export class TopicCache {
  private readonly rows = new Map<string, { row: TopicRow; at: number }>()

  constructor(private readonly defaultMaxAgeMs: number) {}

  async get(db: Database, names: string[], autoCreate?: (name: string) => NewTopic, maxAgeMs = this.defaultMaxAgeMs): Promise<Map<string, TopicRow>> {
    const now = performance.now()
    const found = new Map<string, TopicRow>()
    const missing: string[] = []
    for (const name of names) {
      const hit = this.rows.get(name)
      if (hit && now - hit.at < maxAgeMs) found.set(name, hit.row)
      else missing.push(name)
    }
    if (missing.length === 0) return found
    let rows = await storeFor(db).topics.findTopics(missing)
    if (autoCreate && rows.length < missing.length) {
      const have = new Set(rows.map((r) => r.name))
      await storeFor(db).topics.insertTopics(missing.filter((n) => !have.has(n)).map(autoCreate))
      rows = await storeFor(db).topics.findTopics(missing)
    }
    for (const row of rows) {
      this.rows.set(row.name, { row, at: now })
      found.set(row.name, row)
    }
    return found
  }

  forget(names?: string[]): void {
    if (!names) this.rows.clear()
    else for (const n of names) this.rows.delete(n)
  }
}
