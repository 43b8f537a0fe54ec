import kafkajs from 'kafkajs'

const { Kafka, logLevel } = kafkajs

/**
 * Polls the broker with a KafkaJS admin until listTopics answers, then touches the group and
 * transaction coordinators so that their internal topics exist before the first test needs them
 * (otherwise the first consumer and the first transactional producer pay for it, and flake).
 */
export async function waitUntilReady(brokers: string[], { timeoutMs, aborted }: { timeoutMs: number; aborted?: () => string | null }): Promise<void> {
  const deadline = Date.now() + timeoutMs
  const kafka = new Kafka({
    clientId: 'compat-ready-check',
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    retry: { retries: 0 },
  })
  let lastError: unknown
  for (;;) {
    const why = aborted?.()
    if (why) throw new Error(why)
    if (Date.now() > deadline) {
      throw new Error(`Kafka at ${brokers.join(',')} not ready after ${timeoutMs} ms: ${String(lastError)}`)
    }
    const admin = kafka.admin()
    try {
      await admin.connect()
      await admin.listTopics()
      break
    } catch (e) {
      lastError = e
      await new Promise((r) => setTimeout(r, 250))
    } finally {
      await admin.disconnect().catch(() => {})
    }
  }
  await retryUntil(deadline, () => warmUp(brokers))
}

async function retryUntil(deadline: number, step: () => Promise<void>): Promise<void> {
  for (;;) {
    try {
      return await step()
    } catch (e) {
      // coordinators answer "loading" / "not the correct coordinator" for a while after start
      if (Date.now() > deadline) throw e
      await new Promise((r) => setTimeout(r, 250))
    }
  }
}

async function warmUp(brokers: string[]): Promise<void> {
  const kafka = new Kafka({ clientId: 'compat-warm-up', brokers, logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  const producer = kafka.producer({ transactionalId: 'compat-warm-up', maxInFlightRequests: 1, idempotent: true })
  try {
    await admin.connect()
    await admin.fetchOffsets({ groupId: 'compat-warm-up', topics: [] }) // FindCoordinator(group)
    await producer.connect() // InitProducerId via the transaction coordinator
    const tx = await producer.transaction()
    await tx.abort()
  } finally {
    await producer.disconnect().catch(() => {})
    await admin.disconnect().catch(() => {})
  }
}
