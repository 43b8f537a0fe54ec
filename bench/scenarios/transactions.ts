// transactions: one transactional producer, transactions of 10 messages each, one after another.
import { produceTransactions, withProducer } from '../lib/produce.js'
import { createTopic } from '../lib/target.js'
import type { Row, RunContext } from '../lib/types.js'

const SIZE = 10

export async function transactionsScenario(ctx: RunContext): Promise<Row[]> {
  const topic = `bench-tx-${ctx.runId}`
  await createTopic(ctx.target, topic, 1)
  const r = await withProducer(
    ctx.target,
    async (p) => {
      await produceTransactions(p, topic, SIZE, 0.5) // warm-up
      return produceTransactions(p, topic, SIZE, ctx.sizes.transactionSeconds)
    },
    { transactionalId: `bench-tx-${ctx.runId}`, idempotent: true, maxInFlightRequests: 1 },
  )
  const perSecond = r.transactions / (r.ms / 1000)
  ctx.log(`transactions: ${perSecond.toFixed(0)} tx/s (${r.transactions} in ${Math.round(r.ms)} ms)`)
  return [
    {
      key: 'transactions.perSecond',
      scenario: 'transactions',
      label: `transactions of ${SIZE} messages, one at a time`,
      unit: 'tx/s',
      value: perSecond,
      note: `${Math.round(perSecond * SIZE).toLocaleString('en-US')} msg/s`,
      detail: { transactions: r.transactions, ms: Math.round(r.ms), size: SIZE },
    },
  ]
}
