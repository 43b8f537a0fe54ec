// The topic configs of log compaction (docs/compaction.md): checked as Kafka's broker checks them, stored verbatim
// in the topic's config, and read by the maintenance step (R__maintenance_6_compaction.sql). segment.ms is
// accepted for code written for Kafka and has no effect: rows are compacted one by one, not by segment.
import { invalidConfig } from './errors.js'

const INT8_MAX = 9_223_372_036_854_775_807n

const POLICIES = new Set(['delete', 'compact'])

/** Kafka's defaults of these configs, what a topic without them behaves as (describeConfigs reports them). */
export const COMPACTION_DEFAULTS: Readonly<Record<string, string>> = {
  'cleanup.policy': 'delete',
  'delete.retention.ms': '86400000',
  'max.compaction.lag.ms': INT8_MAX.toString(),
  'min.cleanable.dirty.ratio': '0.5',
  'min.compaction.lag.ms': '0',
  'segment.ms': '604800000',
}

function long(name: string, value: string, min: bigint): bigint {
  const v = value.trim()
  const n = /^-?\d+$/.test(v) ? BigInt(v) : undefined
  if (n === undefined || n < min || n > INT8_MAX)
    throw invalidConfig(`${name} must be an integer from ${min} to ${INT8_MAX}, got ${JSON.stringify(value)}`)
  return n
}

/** Kafka's checks of cleanup.policy and the compaction configs; throws INVALID_CONFIG. */
export function checkCompactionConfig(config: Record<string, string>): void {
  const policy = config['cleanup.policy']
  if (policy !== undefined) {
    const parts = policy.split(',').map((p) => p.trim().toLowerCase())
    if (parts.length === 0 || parts.some((p) => !POLICIES.has(p))) {
      throw invalidConfig(`cleanup.policy must be a list of delete and compact, got ${JSON.stringify(policy)}`)
    }
  }
  const minLag = config['min.compaction.lag.ms'] === undefined ? 0n : long('min.compaction.lag.ms', config['min.compaction.lag.ms'], 0n)
  const maxLag = config['max.compaction.lag.ms'] === undefined ? INT8_MAX : long('max.compaction.lag.ms', config['max.compaction.lag.ms'], 1n)
  if (minLag > maxLag) throw invalidConfig(`min.compaction.lag.ms (${minLag}) must not exceed max.compaction.lag.ms (${maxLag})`)
  if (config['delete.retention.ms'] !== undefined) long('delete.retention.ms', config['delete.retention.ms'], 0n)
  if (config['segment.ms'] !== undefined) long('segment.ms', config['segment.ms'], 1n)
  const ratio = config['min.cleanable.dirty.ratio']
  if (ratio !== undefined) {
    const r = Number(ratio)
    if (ratio.trim() === '' || !Number.isFinite(r) || r < 0 || r > 1) {
      throw invalidConfig(`min.cleanable.dirty.ratio must be a number from 0 to 1, got ${JSON.stringify(ratio)}`)
    }
  }
}
