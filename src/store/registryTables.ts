import { quoteIdent } from '../db/identifiers.js'
import type { Tables } from '../db/tables.js'

/** Qualified, quoted names of the schema registry tables (migration V003) for one schema + prefix. */
export interface RegistryTables {
  schema: string
  reference: string
  version: string
  config: string
  /** per subject, the highest version ever handed out (V013) */
  subject: string
  /** registry modes (V014) */
  mode: string
}

export function registryTables(t: Tables): RegistryTables {
  const q = (suffix: string) => `${quoteIdent(t.schema)}.${quoteIdent(`${t.prefix}_${suffix}`)}`
  return {
    schema: q('schema'),
    reference: q('schema_reference'),
    version: q('schema_version'),
    config: q('schema_config'),
    subject: q('schema_subject'),
    mode: q('schema_mode'),
  }
}
