// <prefix>_ensure_partitions(p_at) runs SECURITY DEFINER for every writer and reader: it refuses timestamps outside
// the window the schema can need, so no caller can make partitions without bound, and it pins its search_path.
import { describe, expect, it } from 'vitest'
import { useMaintenanceFixture } from './helpers.js'

const m = useMaintenanceFixture('maint_window')

async function partitionCount(): Promise<number> {
  const [{ n }] = await m.sql<{ n: number }>('SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = $1::regclass', [m.tables.message])
  return n
}

describe('ensure_partitions window', () => {
  it('refuses far-future and far-past timestamps (22023) and makes nothing; calls inside the window are bounded', async () => {
    const before = await partitionCount()
    for (const at of ["now() + interval '60 days'", "now() + interval '10 years'", "now() - interval '400 days'", 'NULL']) {
      await expect(m.sql(`SELECT ${m.fn('ensure_partitions')}(${at})`)).rejects.toMatchObject({
        code: '22023',
        message: expect.stringMatching(/outside the allowed window/),
      })
    }
    expect(await partitionCount()).toBe(before)

    // 20 calls anywhere inside the window add at most window / width partitions (1 day: 30 + 2 back, ~5 ahead)
    for (let i = 0; i < 20; i++) await m.sql(`SELECT ${m.fn('ensure_partitions')}(now() + $1 * interval '1 day')`, [5 - i * 1.6])
    expect(await partitionCount()).toBeLessThanOrEqual(40)
  })

  it('allows the past as far back as the longest topic retention (plus two widths)', async () => {
    await expect(m.sql(`SELECT ${m.fn('ensure_partitions')}(now() - interval '60 days')`)).rejects.toMatchObject({ code: '22023' })
    await m.retentionTopic({ retentionSeconds: 90 * 86_400 })
    await m.sql(`SELECT ${m.fn('ensure_partitions')}(now() - interval '60 days')`)
  })

  it('pins search_path to pg_catalog, the queue schema, pg_temp in every function of the maintenance and partition scripts', async () => {
    const rows = await m.sql<{ name: string; config: string[] | null }>(
      `SELECT p.proname AS name, p.proconfig AS config FROM pg_proc p
       WHERE p.pronamespace = $1::regnamespace AND p.prokind = 'f'
         AND (p.proname LIKE '%maintenance%' OR p.proname LIKE '%partition%' OR p.proname LIKE '%apply_retention')`,
      [m.tables.schema],
    )
    expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining(['metadata_queue_ensure_partitions', 'metadata_queue_apply_retention']))
    for (const r of rows) {
      expect({ name: r.name, path: r.config?.find((c) => c.startsWith('search_path=')) }).toEqual({
        name: r.name,
        path: `search_path=pg_catalog, ${m.tables.schema}, pg_temp`,
      })
    }
  })
})
