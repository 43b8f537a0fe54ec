// The producing side of bench/tools/produce-ab.ts, in this checkout: a warm-up, then the timed sends; reports
// msg/s and this process's CPU per message to the parent.
import { produce, withProducer } from '../lib/produce.js'
import { createTopic, type Target } from '../lib/target.js'

const c = JSON.parse(process.env.AB_PRODUCE ?? 'null') as {
  url: string
  schema: string
  topic: string
  total: number
  batch: number
  inFlight?: number
} | null
if (!c || !process.send) throw new Error('bench/tools/produce-child.ts is started by bench/tools/produce-ab.ts')

async function main(cfg: NonNullable<typeof c>): Promise<void> {
  const target: Target = { backend: 'pgqueue', url: cfg.url, schema: cfg.schema }
  await createTopic(target, cfg.topic, 1)
  const { perSecond, cpuUs } = await withProducer(target, async (p) => {
    await produce(p, cfg.topic, 2000, Math.min(cfg.batch, 100), 4) // warm-up: connections, statements
    const u0 = process.cpuUsage()
    const r = await produce(p, cfg.topic, cfg.total, cfg.batch, cfg.inFlight ?? 1)
    const u = process.cpuUsage(u0)
    return { perSecond: r.perSecond, cpuUs: (u.user + u.system) / cfg.total }
  })
  process.send!({ perSecond, cpuUs }, () => process.exit(0))
}

main(c).catch((e: unknown) => {
  console.error(e)
  process.exit(1)
})
