// The schema registry as the console shows it: subjects with their versions and compatibility level, and every
// version of one subject (the browser diffs two of them). Read through PgSchemaRegistry on the context's pool.
import type { PgSchemaRegistry } from '../registry/registry.js'

export interface SubjectSummary {
  subject: string
  versions: number[]
  latestId: number
  schemaType: string
  compatibility: string
}

export interface SubjectDetail {
  subject: string
  compatibility: string
  versions: Array<{ version: number; id: number; schemaType: string; schema: string; deleted: boolean }>
}

export async function subjectSummaries(registry: PgSchemaRegistry): Promise<SubjectSummary[]> {
  const subjects = await registry.subjects()
  return Promise.all(
    subjects.map(async (subject) => {
      const [versions, latest, compatibility] = await Promise.all([
        registry.versions(subject),
        registry.version(subject, 'latest'),
        registry.effectiveCompatibility(subject),
      ])
      return { subject, versions, latestId: latest.id, schemaType: latest.schemaType, compatibility }
    }),
  )
}

export async function subjectDetail(registry: PgSchemaRegistry, subject: string): Promise<SubjectDetail> {
  const numbers = await registry.versions(subject, { deleted: true })
  const versions = await Promise.all(numbers.map((n) => registry.version(subject, n, { deleted: true })))
  return {
    subject,
    compatibility: await registry.effectiveCompatibility(subject),
    versions: versions.map((v) => ({ version: v.version, id: v.id, schemaType: v.schemaType, schema: pretty(v.schema), deleted: v.deleted })),
  }
}

/** One field per line, so a line diff shows what changed. */
function pretty(schema: string): string {
  try {
    return JSON.stringify(JSON.parse(schema), null, 2)
  } catch {
    return schema
  }
}
