// Concurrent registration from separate pools and separate processes: one global id per schema, one version
// per (subject, schema), gap-free version numbers.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PgSchemaRegistry } from '../../../src/registry/index.js'
import { registryTables } from '../../../src/store/registryTables.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'
import { spawnFixture } from '../../helpers/processes.js'

const t = useTestKafka('reg_concurrency')
const pools: pg.Pool[] = []
let first: PgSchemaRegistry
let second: PgSchemaRegistry

beforeAll(async () => {
  // migrate through the Kafka, then use two independent pools as two processes would
  const opened = await PgSchemaRegistry.open({ kafka: t.kafka })
  await opened.close()
  const make = () => {
    const pool = new pg.Pool({ connectionString: t.db.connectionString, max: 8 })
    pools.push(pool)
    return new PgSchemaRegistry(pool, opened.tables)
  }
  first = make()
  second = make()
})

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()))
})

async function versionRows(subjectPrefix: string): Promise<Array<{ subject: string; version: number; schema_id: number }>> {
  const r = registryTables(first.tables)
  const res = await t.db.pool.query(`SELECT subject, version, schema_id FROM ${r.version} WHERE starts_with(subject, $1) ORDER BY subject, version`, [
    subjectPrefix,
  ])
  return res.rows
}

const schemaText = (name: string, extra = 0) =>
  JSON.stringify({ type: 'record', name, fields: Array.from({ length: extra + 1 }, (_, i) => ({ name: `f${i}`, type: 'int', default: 0 })) })

describe('concurrent registration', () => {
  it('two pools racing on the same schema and subject get one id and one version', async () => {
    for (let round = 0; round < 10; round++) {
      const subject = uniqueName('race')
      const schema = schemaText(`Race${round}`)
      const results = await Promise.all([
        first.register(subject, { schema }),
        second.register(subject, { schema }),
        first.register(`${subject}-other`, { schema }),
        second.register(`${subject}-other`, { schema }),
      ])
      expect(new Set(results.map((r) => r.id)).size).toBe(1)
      expect(await versionRows(subject)).toEqual([
        { subject, version: 1, schema_id: results[0]!.id },
        { subject: `${subject}-other`, version: 1, schema_id: results[0]!.id },
      ])
    }
  })

  it('different schemas racing on one subject get distinct, gap-free versions', async () => {
    const subject = uniqueName('versions')
    await first.setCompatibility('NONE', subject)
    const registrations = Array.from({ length: 12 }, (_, i) => (i % 2 ? first : second).register(subject, { schema: schemaText('Many', i) }))
    const results = await Promise.all(registrations)
    expect(new Set(results.map((r) => r.id)).size).toBe(12)
    expect(results.map((r) => r.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1))
    expect((await versionRows(subject)).map((r) => r.version)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1))
  })

  it('two child processes registering the same 40 schemas at once agree on every id', async () => {
    const subjectPrefix = uniqueName('proc')
    const env = {
      REG_DATABASE_URL: t.db.connectionString,
      REG_SCHEMA: t.db.schema,
      REG_COUNT: '40',
      REG_SUBJECTS: '4',
      REG_SCHEMA_PREFIX: `p${Date.now()}_`,
      REG_SUBJECT_PREFIX: subjectPrefix,
      REG_START_AT: String(Date.now() + 4000), // both processes are up by then (tsx start-up)
    }
    const children = [0, 1].map(() => spawnFixture('../integration/registry/fixtures/registerWorker.ts', env))
    const lines = await Promise.all(
      children.map((c) =>
        Promise.race([
          c.waitForLine((l) => l.startsWith('RESULT '), 30_000),
          c.exited.then((code) => Promise.reject(new Error(`worker exited with ${code} before its result`))),
        ]),
      ),
    )
    expect(await Promise.all(children.map((c) => c.exited))).toEqual([0, 0])
    const [a, b] = lines.map((l) => JSON.parse(l.slice('RESULT '.length)) as Record<string, number>)
    expect(Object.keys(a!)).toHaveLength(40)
    expect(b).toEqual(a)
    expect(new Set(Object.values(a!)).size).toBe(40)
    const rows = await versionRows(subjectPrefix)
    expect(rows).toHaveLength(40) // one version per schema, none doubled
    for (let s = 0; s < 4; s++) {
      const versions = rows.filter((r) => r.subject === `${subjectPrefix}-${s}`).map((r) => r.version)
      expect(versions).toEqual(Array.from({ length: 10 }, (_, i) => i + 1))
    }
  }, 60_000)
})
