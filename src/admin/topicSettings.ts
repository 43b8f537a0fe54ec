// Kafka topic configs <-> pgQueue topic columns. Entries are kept verbatim in the topic's config jsonb; the two
// that pgQueue enforces itself also set their columns: retention.ms -> retention_max_age_seconds and
// retention.bytes -> max_total_payload_bytes (0 = no limit in both, where Kafka says -1). A topic whose
// cleanup.policy is compact without delete keeps its rows forever (Kafka applies no retention to it): both columns
// are 0, and compaction (src/admin/compactionSettings.ts) is what removes rows.
import type { IResourceConfigEntry } from 'kafkajs'
import type { TopicDefaults } from '../config/types.js'
import { cleanupPolicy } from '../store/compaction.js'
import type { TopicSettings } from '../store/topicConfig.js'
import type { TopicRow } from '../store/topics.js'
import { checkCompactionConfig, COMPACTION_DEFAULTS } from './compactionSettings.js'
import { invalidConfig } from './errors.js'

export const RETENTION_MS = 'retention.ms'
export const RETENTION_BYTES = 'retention.bytes'

const INT4_MAX = 2_147_483_647n
const INT8_MAX = 9_223_372_036_854_775_807n

/** Kafka's long configs: an integer of at least -1 that fits a signed 64-bit value. */
function parseLong(name: string, value: string): bigint {
  const n = /^-?\d+$/.test(value.trim()) ? BigInt(value.trim()) : undefined
  if (n === undefined || n < -1n || n > INT8_MAX) {
    throw invalidConfig(`${name} must be an integer from -1 to ${INT8_MAX}, got ${JSON.stringify(value)}`)
  }
  return n
}

/** ms -> whole seconds, rounded up; -1 and anything beyond the column (about 68 years) mean keep forever. */
export function retentionSeconds(value: string): number {
  const ms = parseLong(RETENTION_MS, value)
  if (ms === -1n) return 0
  const seconds = (ms + 999n) / 1000n
  if (seconds > INT4_MAX) return 0
  return Math.max(1, Number(seconds)) // 0 ms must not turn into "no limit"
}

export function retentionBytes(value: string): number {
  const bytes = parseLong(RETENTION_BYTES, value)
  // -1 and sizes past 2^53 (far beyond any database) mean no limit; 0 must not turn into "no limit"
  if (bytes === -1n || bytes > BigInt(Number.MAX_SAFE_INTEGER)) return 0
  return Number(bytes === 0n ? 1n : bytes)
}

/**
 * Settings for a topic from its Kafka config entries; the columns fall back to the configured defaults, as Kafka
 * falls back to the broker's. Throws INVALID_CONFIG for unusable retention values.
 */
export function settingsFromEntries(entries: readonly IResourceConfigEntry[] | null | undefined, defaults: TopicDefaults): TopicSettings {
  const config: Record<string, string> = {}
  for (const { name, value } of entries ?? []) config[name] = value
  checkCompactionConfig(config)
  const policy = cleanupPolicy(config)
  if (policy.compact && !policy.delete) return { config, retentionMaxAgeSeconds: 0, maxTotalPayloadBytes: 0 }
  return {
    config,
    retentionMaxAgeSeconds: RETENTION_MS in config ? retentionSeconds(config[RETENTION_MS]!) : defaults.retentionMaxAgeSeconds,
    maxTotalPayloadBytes: RETENTION_BYTES in config ? retentionBytes(config[RETENTION_BYTES]!) : defaults.maxTotalPayloadBytes,
  }
}

export interface EffectiveEntry {
  name: string
  value: string
  /** set explicitly for this topic (Kafka's TOPIC_CONFIG source), else a default */
  explicit: boolean
}

/**
 * The topic's effective configuration: its stored entries, the compaction configs at Kafka's defaults where it has
 * none, and retention.ms / retention.bytes read back from the
 * columns (maintenance acts on those, and DataHub tooling may have changed them). A stored value that maps to the
 * column's value is shown as written (e.g. '1500' rather than '2000').
 */
export function effectiveEntries(row: TopicRow, defaults: TopicDefaults): EffectiveEntry[] {
  const entries = new Map<string, EffectiveEntry>()
  for (const [name, value] of Object.entries(row.config ?? {})) entries.set(name, { name, value: String(value), explicit: true })
  // the configs this transport honours, at Kafka's defaults where the topic has none (as Kafka's describeConfigs)
  for (const [name, value] of Object.entries(COMPACTION_DEFAULTS)) if (!entries.has(name)) entries.set(name, { name, value, explicit: false })
  const policy = cleanupPolicy(row.config)
  // compact without delete: the columns are 0 by rule, not by retention.ms / retention.bytes
  if (policy.compact && !policy.delete) return sortedEntries(entries)
  const column = (name: string, actual: number, toColumn: (v: string) => number, fallback: number, fromColumn: string) => {
    const stored = entries.get(name)
    let storedMatches = false
    try {
      storedMatches = stored !== undefined && toColumn(stored.value) === actual
    } catch {
      // an unparsable stored value (written by another tool) is replaced by the column's value
    }
    if (storedMatches) return
    entries.set(name, { name, value: fromColumn, explicit: stored !== undefined || actual !== fallback })
  }
  const seconds = row.retentionMaxAgeSeconds
  column(RETENTION_MS, seconds, retentionSeconds, defaults.retentionMaxAgeSeconds, seconds === 0 ? '-1' : String(BigInt(seconds) * 1000n))
  const bytes = Number(row.maxTotalPayloadBytes)
  column(RETENTION_BYTES, bytes, retentionBytes, defaults.maxTotalPayloadBytes, bytes === 0 ? '-1' : row.maxTotalPayloadBytes)
  return sortedEntries(entries)
}

const sortedEntries = (entries: Map<string, EffectiveEntry>): EffectiveEntry[] =>
  [...entries.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
