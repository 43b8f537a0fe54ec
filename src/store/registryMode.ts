// Registry modes (V014): per subject, and the global one stored under the subject '' (no real subject is empty).
import { run, type Queryable } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { registryTables } from './registryTables.js'
import { statements } from './statement.js'

export type RegistryMode = 'READWRITE' | 'READONLY' | 'IMPORT'

const sql = statements('registryMode', (t) => {
  const mode = registryTables(t).mode
  return {
    get: `SELECT mode FROM ${mode} WHERE subject = $1`,
    // the subject's own mode, else the global one
    effective: `SELECT mode FROM ${mode} WHERE subject = ANY(ARRAY[$1, '']) ORDER BY subject = '' LIMIT 1`,
    set: `
      INSERT INTO ${mode} (subject, mode) VALUES ($1, $2)
      ON CONFLICT (subject) DO UPDATE SET mode = EXCLUDED.mode, updated_at = now()`,
    delete: `DELETE FROM ${mode} WHERE subject = $1 RETURNING mode`,
  }
})

export async function getMode(db: Queryable, t: Tables, subject: string): Promise<RegistryMode | undefined> {
  return (await run<{ mode: RegistryMode }>(db, sql(t).get, [subject])).rows[0]?.mode
}

export async function effectiveMode(db: Queryable, t: Tables, subject: string): Promise<RegistryMode | undefined> {
  return (await run<{ mode: RegistryMode }>(db, sql(t).effective, [subject])).rows[0]?.mode
}

export async function setMode(db: Queryable, t: Tables, subject: string, mode: RegistryMode): Promise<void> {
  await run(db, sql(t).set, [subject, mode])
}

export async function deleteMode(db: Queryable, t: Tables, subject: string): Promise<RegistryMode | undefined> {
  return (await run<{ mode: RegistryMode }>(db, sql(t).delete, [subject])).rows[0]?.mode
}
