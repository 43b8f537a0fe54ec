// Which consumers of this process are polling, for the health check (DataHub's pollWorkerThreads /
// allThreadsAlive). Driven only by KafkaJS instrumentation events, so it works for both transports.
import type { Consumer } from 'kafkajs'

export type ConsumerState = 'running' | 'restarting' | 'crashed' | 'stopped'

export interface TrackedConsumer {
  groupId: string | null
  state: ConsumerState
  /** last fetch round (ms since the epoch), null before the first */
  lastPollAt: number | null
  /** the crash that stopped or is restarting it */
  error: string | null
}

export interface ConsumersHealth {
  /** tracked consumers that are running or restarting after a retriable crash */
  running: number
  crashed: number
  /** no tracked consumer crashed for good */
  allAlive: boolean
  consumers: TrackedConsumer[]
}

type EventSource = Pick<Consumer, 'on' | 'events'>

export class ConsumerRegistry {
  private readonly live = new Set<TrackedConsumer>()
  private readonly tracked = new WeakMap<object, () => void>()

  /**
   * Follows a consumer through its events. A crash is reported after the consumer stopped (KafkaJS disconnects
   * first), so a crashed consumer stays crashed until it joins again or is stopped / disconnected by its owner.
   */
  track(consumer: EventSource, groupId: string | null = null): () => void {
    // tracking twice (the consumer reports itself, and its owner tracks it too) must not count it twice
    const existing = this.tracked.get(consumer)
    if (existing) return existing
    const entry: TrackedConsumer = { groupId, state: 'stopped', lastPollAt: null, error: null }
    const set = (state: ConsumerState) => {
      entry.state = state
      if (state === 'stopped') this.live.delete(entry)
      else this.live.add(entry)
    }
    const { events } = consumer
    const removers = [
      consumer.on(events.GROUP_JOIN, (e) => {
        entry.groupId = e.payload.groupId
        entry.error = null
        set('running')
      }),
      consumer.on(events.FETCH_START, () => {
        entry.lastPollAt = Date.now()
        if (entry.state !== 'running') set('running')
      }),
      consumer.on(events.CRASH, (e) => {
        entry.error = e.payload.error?.message ?? String(e.payload.error)
        entry.groupId = e.payload.groupId ?? entry.groupId
        set(e.payload.restart ? 'restarting' : 'crashed')
      }),
      consumer.on(events.STOP, () => set('stopped')),
      consumer.on(events.DISCONNECT, () => set('stopped')),
    ]
    const untrack = () => {
      removers.forEach((remove) => remove())
      this.live.delete(entry)
      this.tracked.delete(consumer)
    }
    this.tracked.set(consumer, untrack)
    return untrack
  }

  /** Forgets a consumer that crashed for good (after the operator has dealt with it). */
  clearCrashed(): void {
    for (const entry of this.live) if (entry.state === 'crashed') this.live.delete(entry)
  }

  snapshot(): ConsumersHealth {
    const consumers = [...this.live].map((e) => ({ ...e }))
    const crashed = consumers.filter((c) => c.state === 'crashed').length
    return { running: consumers.length - crashed, crashed, allAlive: crashed === 0, consumers }
  }
}

const registries = new WeakMap<object, ConsumerRegistry>()

/** The registry of one owner (a PgQueueContext, or any Kafka instance), made on first use. */
export function consumerRegistryFor(owner: object): ConsumerRegistry {
  let registry = registries.get(owner)
  if (!registry) registries.set(owner, (registry = new ConsumerRegistry()))
  return registry
}
