// Compatibility levels: per subject, and the global one stored under the subject '' (no real subject is empty).
import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import type { CompatibilityLevel } from './registryTypes.js'
import { registryTables } from './registryTables.js'
import { statements } from './statement.js'

export const GLOBAL_SUBJECT = ''

const sql = statements('registryConfig', (t) => {
  const r = registryTables(t)
  return {
    get: `SELECT compatibility FROM ${r.config} WHERE subject = $1`,
    set: `
      INSERT INTO ${r.config} (subject, compatibility) VALUES ($1, $2)
      ON CONFLICT (subject) DO UPDATE SET compatibility = EXCLUDED.compatibility, updated_at = now()`,
    delete: `DELETE FROM ${r.config} WHERE subject = $1 RETURNING compatibility`,
  }
})

export async function getCompatibility(db: Queryable, t: Tables, subject: string): Promise<CompatibilityLevel | undefined> {
  return (await run<{ compatibility: CompatibilityLevel }>(db, sql(t).get, [subject])).rows[0]?.compatibility
}

export async function setCompatibility(db: Queryable, t: Tables, subject: string, level: CompatibilityLevel): Promise<void> {
  await run(db, sql(t).set, [subject, level])
}

export async function deleteCompatibility(db: Queryable, t: Tables, subject: string): Promise<CompatibilityLevel | undefined> {
  return (await run<{ compatibility: CompatibilityLevel }>(db, sql(t).delete, [subject])).rows[0]?.compatibility
}
