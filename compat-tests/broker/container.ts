import { KAFKA_VERSION } from './local-kafka.js'
import { freePort } from './ports.js'
import { waitUntilReady } from './ready.js'
import type { RunningBroker } from './types.js'

/**
 * Resolves with a broker in a container, or with null when no container engine answers.
 * The probe rejects within milliseconds without an engine, so it is cheap to try first.
 */
export async function startKafkaContainer(log: (msg: string) => void): Promise<RunningBroker | null> {
  const tc = await import('testcontainers')
  try {
    await tc.getContainerRuntimeClient()
  } catch (e) {
    log(`no container engine (${(e as Error).message}); falling back to a local broker`)
    return null
  }
  const started = Date.now()
  // Same port inside and outside: the advertised listener must be reachable from this process.
  const port = await freePort()
  const container = await new tc.GenericContainer(`apache/kafka:${KAFKA_VERSION}`)
    .withExposedPorts({ container: port, host: port })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: `PLAINTEXT://0.0.0.0:${port},CONTROLLER://localhost:9093`,
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://localhost:${port}`,
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS: '4',
      KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS: '4',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'true',
      KAFKA_NUM_PARTITIONS: '1',
      KAFKA_LOG_CLEANER_BACKOFF_MS: '100',
    })
    .withWaitStrategy(tc.Wait.forLogMessage(/Kafka Server started/))
    .withStartupTimeout(120_000)
    .start()
  const brokers = [`${container.getHost()}:${port}`]
  try {
    await waitUntilReady(brokers, { timeoutMs: 60_000 })
  } catch (e) {
    await container.stop().catch(() => {})
    throw e
  }
  return {
    brokers,
    source: `container apache/kafka:${KAFKA_VERSION} (${container.getId().slice(0, 12)})`,
    timings: { startMs: Date.now() - started },
    stop: async () => {
      await container.stop()
    },
  }
}
