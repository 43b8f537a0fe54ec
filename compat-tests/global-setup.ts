import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { findBroker, type RunningBroker } from './broker/index.js'
import { resolveTestPostgres } from '../test/setup/globalPg.js'

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string[]
    /** Why the kafka backend cannot run (tests are then skipped with this reason), or null. */
    kafkaUnavailable: string | null
    /** Prefix of this run's pgqueue schemas, so the teardown drops only what this run created. */
    compatRunId: string
  }
}

const log = (msg: string) => console.log(`[compat] ${msg}`)

/** kafka: starts (or finds) one broker per run. pgqueue: no broker; drops the run's schemas at the end. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const transport = process.env.DATAHUB_MESSAGING_TRANSPORT ?? 'kafka'
  project.provide('kafkaBrokers', [])
  project.provide('kafkaUnavailable', null)
  const runId = randomBytes(3).toString('hex')
  project.provide('compatRunId', runId)
  if (transport === 'pgqueue') {
    // the same PostgreSQL the integration tests use: DATABASE_URL, PG*, else the embedded server
    const postgres = await resolveTestPostgres(project.config.root, 'compat')
    project.provide('pgUrl', postgres.url)
    return async () => {
      await dropRunSchemas(runId, postgres.url)
      await postgres.stop()
    }
  }
  if (transport !== 'kafka') return async () => {}

  let broker: RunningBroker
  try {
    broker = await findBroker(log)
  } catch (e) {
    const reason = `no Kafka broker: ${(e as Error).message}`
    if (process.env.COMPAT_REQUIRE_KAFKA === '1') throw new Error(`${reason} (COMPAT_REQUIRE_KAFKA=1)`, { cause: e })
    log(`${reason}\nkafka backend skipped (set COMPAT_REQUIRE_KAFKA=1 to fail instead)`)
    project.provide('kafkaUnavailable', reason.split('\n')[0]!)
    return async () => {}
  }
  const { fetchJarsMs, startMs } = broker.timings
  log(
    `${broker.source} at ${broker.brokers.join(',')}: ${fetchJarsMs === undefined ? 'jars cached' : `jars fetched in ${fetchJarsMs} ms`}, ready in ${startMs} ms`,
  )
  if (process.env.COMPAT_BROKER_INFO_FILE) {
    fs.writeFileSync(process.env.COMPAT_BROKER_INFO_FILE, JSON.stringify({ source: broker.source, brokers: broker.brokers, ...broker.timings }))
  }
  project.provide('kafkaBrokers', broker.brokers)
  return async () => {
    const stopping = Date.now()
    await broker.stop()
    log(`stopped in ${Date.now() - stopping} ms`)
  }
}

/** Drops the per-file schemas of this run (COMPAT_KEEP_SCHEMAS=1 keeps them for debugging). */
async function dropRunSchemas(runId: string, url: string): Promise<void> {
  if (process.env.COMPAT_KEEP_SCHEMAS === '1') return
  const client = new pg.Client({ connectionString: url })
  try {
    await client.connect()
    const { rows } = await client.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)', [`compat_${runId}_`])
    for (const { nspname } of rows) await client.query(`DROP SCHEMA "${nspname}" CASCADE`)
  } catch (e) {
    log(`could not drop this run's schemas: ${(e as Error).message}`)
  } finally {
    await client.end().catch(() => {})
  }
}
