import { startKafkaContainer } from './container.js'
import { startLocalKafka } from './local-kafka.js'
import { waitUntilReady } from './ready.js'
import type { RunningBroker } from './types.js'

export type { RunningBroker } from './types.js'

/** KAFKA_BROKERS, else a container when an engine answers, else a local broker from Maven jars. */
export async function findBroker(log: (msg: string) => void): Promise<RunningBroker> {
  const fromEnv = process.env.KAFKA_BROKERS?.split(',')
    .map((b) => b.trim())
    .filter(Boolean)
  if (fromEnv?.length) {
    const started = Date.now()
    await waitUntilReady(fromEnv, { timeoutMs: 30_000 })
    return {
      brokers: fromEnv,
      source: `KAFKA_BROKERS=${fromEnv.join(',')}`,
      timings: { startMs: Date.now() - started },
      stop: async () => {},
    }
  }
  if (process.env.COMPAT_NO_CONTAINERS !== '1') {
    const inContainer = await startKafkaContainer(log)
    if (inContainer) return inContainer
  }
  return startLocalKafka(log)
}
