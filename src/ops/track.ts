import type { Consumer } from 'kafkajs'
import { ConsumerRegistry, consumerRegistryFor } from './consumerRegistry.js'
import { contextOf } from './context.js'

/**
 * Reports a consumer's state to the health check. `owner` is the Kafka instance that made it (its registry is the one
 * createOpsHandler({ kafka }) reads) or a ConsumerRegistry. Returns the function that stops tracking.
 */
export function trackConsumer(owner: object | ConsumerRegistry, consumer: Consumer, groupId?: string): () => void {
  const registry = owner instanceof ConsumerRegistry ? owner : consumerRegistryFor(contextOf(owner) ?? owner)
  return registry.track(consumer, groupId ?? null)
}
