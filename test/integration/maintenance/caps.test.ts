// Every cap on DataHub's seeded catalogue, with topics under, at and over it, through the three runners (in-app,
// the pg_cron procedure, DataHub's apply_retention()): none of them may abort on a normal state, and a step that
// fails for one topic is reported for that topic while every other topic and step still runs.
import { describe, expect, it } from 'vitest'
import { dataHubCatalogue, DATAHUB_TOPICS } from '../../../src/datahub/topics.js'
import { contentTypeId, upsertCatalogue } from '../../../src/store/datahubTopics.js'
import { cronCommand } from '../../../src/store/maintenanceCron.js'
import { runMaintenance } from '../../../src/maintenance/run.js'
import { useMaintenanceFixture, type MaintenanceFixture } from './helpers.js'

interface Outcome {
  /** step failures the runner reported, as `policy topic` text */
  failures: string[]
}

type Runner = (m: MaintenanceFixture) => Promise<Outcome>

const RUNNERS: Record<string, Runner> = {
  'in-app runner': async (m) => {
    const report = await runMaintenance(
      { pool: m.db.pool, tables: m.tables, maintenance: m.maintenance, logger: m.logger },
      { vacuum: false, batchDeleteLimit: 7 },
    )
    if (report.skipped) throw new Error('skipped')
    return { failures: report.errors.map((e) => `${e.step} ${e.topic ?? ''}: ${e.message}`) }
  },
  'pg_cron procedure': async (m) => withNotices(m, (c) => c.query(cronCommand(m.tables, 0, 7))),
  'apply_retention()': async (m) => withNotices(m, (c) => c.query(`SELECT ${m.fn('apply_retention')}()`)),
}

async function withNotices(
  m: MaintenanceFixture,
  fn: (c: Awaited<ReturnType<MaintenanceFixture['db']['connect']>>) => Promise<unknown>,
): Promise<Outcome> {
  const client = await m.db.connect()
  const failures: string[] = []
  client.on('notice', (n) => {
    if (n.severity === 'WARNING') failures.push(n.message ?? '')
  })
  await fn(client)
  await client.end()
  return { failures }
}

for (const [runnerName, runOnce] of Object.entries(RUNNERS)) {
  describe(`caps through the ${runnerName}`, () => {
    const m = useMaintenanceFixture(`maint_caps_${runnerName.slice(0, 6)}`)

    async function seedDataHub(): Promise<Map<string, string>> {
      const mime = await contentTypeId(m.db.pool, m.tables, 'application/avro')
      const seeded = await upsertCatalogue(m.db.pool, m.tables, dataHubCatalogue(), mime)
      return new Map(seeded.map((s) => [s.name, s.id]))
    }

    it("on DataHub's seeded catalogue: topics under, at and over every cap end exactly at their cap", async () => {
      const ids = await seedDataHub()
      const history = ids.get(DATAHUB_TOPICS.dataHubUpgradeHistory)! // cap 10, keep forever
      const failed = ids.get(DATAHUB_TOPICS.failedMetadataChangeProposal)! // cap 100
      await m.insertRows(history, 0, 5) // under
      await m.insertRows(failed, 0, 150) // over
      const rowsAt = await m.retentionTopic({ maxRows: 20 })
      await m.insertRows(rowsAt.id, 0, 20)
      const rowsOver = await m.retentionTopic({ maxRows: 4, partitions: 2 })
      for (let i = 0; i < 10; i++) await m.insertRows(rowsOver.id, i % 2, 1, { ageSeconds: 100 - i })
      const bytesUnder = await m.retentionTopic({ maxBytes: 1000 })
      await m.insertRows(bytesUnder.id, 0, 5, { bytes: 100 })
      const bytesAt = await m.retentionTopic({ maxBytes: 500 })
      await m.insertRows(bytesAt.id, 0, 5, { bytes: 100 })
      const bytesOver = await m.retentionTopic({ maxBytes: 300 })
      await m.insertRows(bytesOver.id, 0, 5, { bytes: 100 })
      const ageUnder = await m.retentionTopic({ retentionSeconds: 3600 })
      await m.insertRows(ageUnder.id, 0, 3, { ageSeconds: 60 })
      const ageOver = await m.retentionTopic({ retentionSeconds: 3600 })
      await m.insertRows(ageOver.id, 0, 3, { ageSeconds: 7200 })
      await m.insertRows(ageOver.id, 0, 2, { ageSeconds: 60 })
      const empty = await m.retentionTopic({ maxRows: 3, maxBytes: 10, retentionSeconds: 60 })

      const outcome = await runOnce(m)

      expect(outcome.failures).toEqual([])
      expect(await m.seqs(history)).toEqual([1, 2, 3, 4, 5])
      expect(await m.seqs(failed)).toEqual(Array.from({ length: 100 }, (_, i) => 51 + i))
      expect(await m.seqs(rowsAt.id)).toHaveLength(20)
      // the 6 oldest across both partitions go: rows 1..6 alternate 0,1,0,1,0,1
      expect([await m.seqs(rowsOver.id, 0), await m.seqs(rowsOver.id, 1)]).toEqual([
        [4, 5],
        [4, 5],
      ])
      expect(await m.seqs(bytesUnder.id)).toEqual([1, 2, 3, 4, 5])
      expect(await m.seqs(bytesAt.id)).toEqual([1, 2, 3, 4, 5])
      expect(await m.seqs(bytesOver.id)).toEqual([3, 4, 5])
      expect(await m.seqs(ageUnder.id)).toEqual([1, 2, 3])
      expect(await m.seqs(ageOver.id)).toEqual([4, 5])
      expect(await m.seqs(empty.id)).toEqual([])

      // a second run finds nothing more to do
      expect((await runOnce(m)).failures).toEqual([])
      expect(await m.seqs(failed)).toHaveLength(100)
      expect(await m.seqs(bytesOver.id)).toEqual([3, 4, 5])
    })

    it('a step failing for one topic is reported for it; the other topics and the later steps still run', async () => {
      const broken = await m.retentionTopic({ maxRows: 2 })
      const healthy = await m.retentionTopic({ maxRows: 2 })
      const aggressive = await m.retentionTopic({ aggressive: true })
      await m.insertRows(broken.id, 0, 6)
      await m.insertRows(healthy.id, 0, 6)
      await m.insertRows(aggressive.id, 0, 6)
      await m.sql(`INSERT INTO ${m.tables.consumerRegistration} (consumer_group, topic_id) VALUES ('g', $1)`, [aggressive.id])
      await m.sql(`INSERT INTO ${m.tables.consumerOffset} (consumer_group, topic_id, partition_id, offset_value) VALUES ('g', $1, 0, 4)`, [
        aggressive.id,
      ])
      const trigger = `${m.tables.schema}_fail_${broken.id}`
      await m.sql(`
        CREATE FUNCTION "${m.tables.schema}"."${trigger}"() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF OLD.topic_id = ${Number(broken.id)} THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN OLD; END $$;
        CREATE TRIGGER fail_one BEFORE DELETE ON ${m.tables.message} FOR EACH ROW EXECUTE FUNCTION "${m.tables.schema}"."${trigger}"()`)
      try {
        const outcome = await runOnce(m)

        expect(outcome.failures).toHaveLength(1)
        expect(outcome.failures[0]).toMatch(/row ?cap/i)
        expect(outcome.failures[0]).toContain(broken.name)
        expect(outcome.failures[0]).toContain('injected failure')
        expect(await m.seqs(broken.id)).toHaveLength(6)
        expect(await m.seqs(healthy.id)).toEqual([5, 6])
        expect(await m.seqs(aggressive.id)).toEqual([5, 6]) // a later step
      } finally {
        await m.sql(`DROP TRIGGER fail_one ON ${m.tables.message}`)
      }
    })
  })
}
