// `tsx scripts/with-broker.mts <command> [args...]`: starts ONE Kafka broker (compat-tests/broker: KAFKA_BROKERS, a
// container, else the local broker from Maven jars), runs the command with KAFKA_BROKERS pointing at it, stops it.
// `npm test` runs its stages under it, so the contract suite's Kafka column and the integration file that needs a
// broker share one start instead of paying one each (they cannot run two: the local broker has one run directory).
// No broker (no Java, no network for the jars): the command runs without KAFKA_BROKERS, and the contract suite
// decides whether that fails (COMPAT_REQUIRE_KAFKA=1) or skips its Kafka column.
import { spawn } from 'node:child_process'
import { findBroker, type RunningBroker } from '../compat-tests/broker/index.js'

const log = (msg: string) => console.log(`[broker] ${msg}`)
const [command, ...args] = process.argv.slice(2)
if (!command) throw new Error('usage: tsx scripts/with-broker.mts <command> [args...]')

const wanted = (process.env.COMPAT_BACKENDS ?? 'kafka,pgqueue').split(',').some((b) => b.trim() === 'kafka')
let broker: RunningBroker | undefined
if (wanted && !process.env.KAFKA_BROKERS) {
  try {
    broker = await findBroker(log)
    const { fetchJarsMs, startMs } = broker.timings
    log(
      `${broker.source} at ${broker.brokers.join(',')}: ${fetchJarsMs === undefined ? 'jars cached' : `jars fetched in ${fetchJarsMs} ms`}, ready in ${startMs} ms`,
    )
    process.env.KAFKA_BROKERS = broker.brokers.join(',')
  } catch (e) {
    log(`none started: ${(e as Error).message.split('\n')[0]}`)
  }
}
const code = await new Promise<number>((resolve) => {
  const child = spawn(command, args, { stdio: 'inherit', env: process.env })
  child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)))
})
if (broker) {
  const stopping = Date.now()
  await broker.stop()
  log(`stopped in ${Date.now() - stopping} ms`)
}
process.exitCode = code
