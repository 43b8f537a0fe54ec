// The Confluent Schema Registry REST API (the paths, bodies and error codes Confluent documents), on a
// PgSchemaRegistry. Responses leave out schemaType for AVRO and references when empty, as Confluent does.
import { invalidVersion, schemaNotFound } from '../errors.js'
import type { PgSchemaRegistry } from '../registry.js'
import type { SchemaInput, StoredSchema, SubjectVersion, VersionSelector } from '../../store/registryTypes.js'
import { Router, type RouteRequest } from './router.js'

const INT32_MAX = 2_147_483_647

/** "latest" / -1, or a version from 1 to 2^31-1; anything else is 42202. */
export function parseVersion(raw: string): VersionSelector {
  if (raw === 'latest' || raw === '-1') return 'latest'
  if (/^\d+$/.test(raw)) {
    const n = Number(raw)
    if (n >= 1 && n <= INT32_MAX) return n
  }
  throw invalidVersion(raw)
}

function parseId(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) > INT32_MAX) throw schemaNotFound(`Schema ${raw} not found`)
  return Number(raw)
}

const flag = (req: RouteRequest, name: string) => (req.query.get(name) ?? '').toLowerCase() === 'true'

function schemaJson(s: StoredSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (s.schemaType !== 'AVRO') out.schemaType = s.schemaType
  out.schema = s.schema
  if (s.references.length > 0) out.references = s.references
  return out
}

function versionJson(v: SubjectVersion): Record<string, unknown> {
  const { schema, ...rest } = schemaJson(v)
  return { subject: v.subject, version: v.version, id: v.id, ...rest, schema }
}

export function registryRoutes(registry: PgSchemaRegistry): Router {
  const r = new Router()
  const body = async (req: RouteRequest) => ((await req.body()) ?? {}) as SchemaInput

  r.on('GET', '/', async () => ({ json: {} }))
  const mode = async (req: RouteRequest) => ((await req.body()) as { mode?: unknown } | undefined)?.mode
  r.on('GET', '/mode', async () => ({ json: { mode: await registry.getMode() } }))
  const force = (req: RouteRequest) => ({ force: flag(req, 'force') })
  r.on('PUT', '/mode', async (req) => ({ json: { mode: await registry.setMode(await mode(req), undefined, force(req)) } }))
  r.on('GET', '/mode/:subject', async (req) => ({
    json: { mode: await registry.getMode(req.params.subject!, { defaultToGlobal: flag(req, 'defaultToGlobal') }) },
  }))
  r.on('PUT', '/mode/:subject', async (req) => ({
    json: { mode: await registry.setMode(await mode(req), req.params.subject!, force(req)) },
  }))
  r.on('DELETE', '/mode/:subject', async (req) => ({ json: { mode: await registry.deleteMode(req.params.subject!) } }))
  r.on('GET', '/schemas/types', async () => ({ json: ['AVRO'] }))
  r.on('GET', '/schemas', async (req) => {
    const rows = await registry.listSchemas({
      prefix: req.query.get('subjectPrefix') ?? '',
      deleted: flag(req, 'deleted'),
      latestOnly: flag(req, 'latestOnly'),
      offset: Number(req.query.get('offset') ?? 0) || 0,
      limit: Number(req.query.get('limit') ?? -1) || -1,
    })
    return { json: rows.map(versionJson) }
  })
  r.on('GET', '/schemas/ids/:id', async (req) => ({ json: schemaJson(await registry.schemaById(parseId(req.params.id!))) }))
  r.on('GET', '/schemas/ids/:id/schema', async (req) => ({ raw: (await registry.schemaById(parseId(req.params.id!))).schema }))
  r.on('GET', '/schemas/ids/:id/subjects', async (req) => ({
    json: await registry.subjectsForId(parseId(req.params.id!), { deleted: flag(req, 'deleted') }),
  }))
  r.on('GET', '/schemas/ids/:id/versions', async (req) => ({
    json: await registry.versionsForId(parseId(req.params.id!), { deleted: flag(req, 'deleted') }),
  }))

  r.on('GET', '/subjects', async (req) => ({
    json: await registry.subjects({ deleted: flag(req, 'deleted'), prefix: req.query.get('subjectPrefix') ?? '' }),
  }))
  r.on('POST', '/subjects/:subject', async (req) => ({
    json: versionJson(await registry.lookup(req.params.subject!, await body(req), { deleted: flag(req, 'deleted') })),
  }))
  r.on('DELETE', '/subjects/:subject', async (req) => ({
    json: await registry.deleteSubject(req.params.subject!, { permanent: flag(req, 'permanent') }),
  }))
  r.on('GET', '/subjects/:subject/versions', async (req) => ({
    json: await registry.versions(req.params.subject!, { deleted: flag(req, 'deleted') }),
  }))
  r.on('POST', '/subjects/:subject/versions', async (req) => {
    const { id } = await registry.register(req.params.subject!, await body(req))
    return { json: { id } }
  })
  const version = (req: RouteRequest) => registry.version(req.params.subject!, parseVersion(req.params.version!), { deleted: flag(req, 'deleted') })
  r.on('GET', '/subjects/:subject/versions/:version', async (req) => ({ json: versionJson(await version(req)) }))
  r.on('GET', '/subjects/:subject/versions/:version/schema', async (req) => ({ raw: (await version(req)).schema }))
  r.on('GET', '/subjects/:subject/versions/:version/referencedby', async (req) => {
    const v = await version(req)
    return { json: await registry.referencedBy(v.subject, v.version) }
  })
  r.on('DELETE', '/subjects/:subject/versions/:version', async (req) => ({
    json: await registry.deleteVersion(req.params.subject!, parseVersion(req.params.version!), { permanent: flag(req, 'permanent') }),
  }))

  const compatibility = async (req: RouteRequest, selector: VersionSelector | undefined) => {
    const { compatible, messages } = await registry.testCompatibility(req.params.subject!, selector, await body(req))
    return { json: flag(req, 'verbose') ? { is_compatible: compatible, messages } : { is_compatible: compatible } }
  }
  r.on('POST', '/compatibility/subjects/:subject/versions', (req) => compatibility(req, undefined))
  r.on('POST', '/compatibility/subjects/:subject/versions/:version', (req) => compatibility(req, parseVersion(req.params.version!)))

  const level = async (req: RouteRequest) => ((await req.body()) as { compatibility?: unknown } | undefined)?.compatibility
  r.on('GET', '/config', async () => ({ json: { compatibilityLevel: await registry.getCompatibility() } }))
  r.on('PUT', '/config', async (req) => ({ json: { compatibility: await registry.setCompatibility((await level(req)) as string) } }))
  r.on('GET', '/config/:subject', async (req) => ({
    json: {
      compatibilityLevel: await registry.getCompatibility(req.params.subject!, { defaultToGlobal: flag(req, 'defaultToGlobal') }),
    },
  }))
  r.on('PUT', '/config/:subject', async (req) => ({
    json: { compatibility: await registry.setCompatibility((await level(req)) as string, req.params.subject!) },
  }))
  r.on('DELETE', '/config/:subject', async (req) => ({
    json: { compatibilityLevel: await registry.deleteCompatibility(req.params.subject!) },
  }))
  return r
}
