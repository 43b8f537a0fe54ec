import type { ConsumerConfig, RetryOptions } from 'kafkajs'
import { KafkaJSNonRetriableError } from '../kafkajs/errors.js'
import { validateGroupId } from '../kafkajs/messageValidation.js'

export interface ConsumerSettings {
  groupId: string
  sessionTimeout: number
  heartbeatInterval: number
  maxWaitTimeInMs: number
  metadataMaxAge: number
  maxBytesPerPartition: number
  maxBytes: number
  allowAutoTopicCreation: boolean
  retry: RetryOptions & { restartOnFailure?: (err: Error) => Promise<boolean> }
}

const fail = (message: string): never => {
  throw new KafkaJSNonRetriableError(message)
}

/** KafkaJS's consumer config checks and defaults, plus a valid group id (it reaches SQL as a bound value). */
export function validateConsumerConfig(config: ConsumerConfig): ConsumerSettings {
  if (!config || !config.groupId) fail('Consumer groupId must be a non-empty string.')
  validateGroupId(config.groupId)
  const sessionTimeout = config.sessionTimeout ?? 30_000
  const heartbeatInterval = config.heartbeatInterval ?? 3_000
  // KafkaJS accepts 0 for both intervals (heartbeat every round, fetch without waiting); sessionTimeout must be > 0
  for (const [name, value] of Object.entries({ sessionTimeout, heartbeatInterval, maxWaitTimeInMs: config.maxWaitTimeInMs ?? 5000 })) {
    if (!Number.isFinite(value) || value < 0 || (name === 'sessionTimeout' && value === 0)) {
      fail(`Consumer ${name} must be a non-negative number, received ${value}`)
    }
  }
  if (heartbeatInterval >= sessionTimeout) {
    fail(
      `Consumer heartbeatInterval (${heartbeatInterval}) must be lower than sessionTimeout (${sessionTimeout}). ` +
        'It is recommended to set heartbeatInterval to approximately a third of the sessionTimeout.',
    )
  }
  return {
    groupId: config.groupId,
    sessionTimeout,
    heartbeatInterval,
    maxWaitTimeInMs: config.maxWaitTimeInMs ?? 5000,
    maxBytesPerPartition: config.maxBytesPerPartition ?? 1_048_576,
    metadataMaxAge: config.metadataMaxAge ?? 300_000,
    maxBytes: config.maxBytes ?? 10_485_760,
    allowAutoTopicCreation: config.allowAutoTopicCreation ?? true,
    retry: config.retry ?? {},
  }
}

/** pause / resume argument checks with KafkaJS's messages. */
export function validatePauseEntries(entries: Array<{ topic: string; partitions?: number[] }>, verb: 'pause' | 'resume'): void {
  for (const tp of entries ?? []) {
    if (!tp || typeof tp.topic !== 'string') fail(`Invalid topic ${(tp && tp.topic) || tp}`)
    if (tp.partitions !== undefined && (!Array.isArray(tp.partitions) || tp.partitions.some((p) => !Number.isInteger(p)))) {
      fail(`Array of valid partitions required to ${verb} specific partitions instead of ${tp.partitions}`)
    }
  }
}
