// Fuzz of both HTTP APIs (ops and the mounted schema registry) on one server with a token: random methods, paths,
// query strings, headers (credentials, Host, Origin, media types) and bodies (JSON, junk bytes, strings PostgreSQL
// rejects, huge numbers). No answer is a 5xx, and the stored data changes only through requests that carried the
// token from an allowed Host and were answered 2xx: after every other request the schema's content is unchanged.
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startOpsServer, type OpsServer } from '../../../src/ops/index.js'
import { createSchemaRegistryServer } from '../../../src/registry/http/server.js'
import { useTestKafka } from '../../helpers/kafka.js'
import { raw } from './support.js'
import { runs, scaledMs } from '../../helpers/property.js'

const t = useTestKafka('security_fuzz')
const RUNS = Number(process.env.FUZZ_RUNS ?? 250)
const TOKEN = 'fuzz-token-0123456789abcdef'
const registryHandler = createSchemaRegistryServer({ kafka: t.kafka, basePath: '/schema-registry/api' })
let server: OpsServer
let topic: string
const M = '/openapi/operations/messaging'

/** md5 of every table's rows (partitions through their parent): any write shows. */
async function content(): Promise<Record<string, string>> {
  const { rows } = await t.db.pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`,
    [t.db.schema],
  )
  const out: Record<string, string> = {}
  for (const { name } of rows) {
    const res = await t.db.pool.query(`SELECT coalesce(md5(string_agg(x::text, '|' ORDER BY x::text)), '') AS h FROM "${t.db.schema}"."${name}" x`)
    out[name] = res.rows[0].h
  }
  return out
}

const AVRO = JSON.stringify({ type: 'record', name: 'Fz', fields: [{ name: 'a', type: 'string' }] })
const nasty = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom('a\u0000b', 'a\ud800b', '\udfff', 'x'.repeat(300), 'x'.repeat(70_000), '..', '%', '%00', '%2F', '-1', 'latest'),
)
const segment = fc.oneof(nasty, fc.constantFrom('g1', 'fz', 'subj', 'subj', '1', '1', '0', 'latest', '2147483648', '99999999999')).map((s) => {
  try {
    return encodeURIComponent(s)
  } catch {
    return '%ED%A0%80' // a lone surrogate, as UTF-8 bytes
  }
})
const path = fc.oneof(
  fc.constantFrom('/health', '/metrics', `${M}/transport`, `${M}/consumer/lag`, `${M}/consumers`, `${M}/consumer/offsets/reset`, '/', '/nowhere'),
  fc.constantFrom('/', '/subjects', '/schemas', '/schemas/types', '/config', '/mode').map((p) => `/schema-registry/api${p}`),
  fc
    .tuple(
      fc.constantFrom('/subjects/', '/config/', '/schemas/ids/', '/compatibility/subjects/'),
      segment,
      fc.constantFrom('', '/versions', '/versions/', '/schema', '/subjects'),
      fc.option(segment),
    )
    .map(([a, s, b, v]) => `/schema-registry/api${a}${s}${b}${b.endsWith('/') && v !== null ? v : ''}`),
  fc.array(segment, { maxLength: 4 }).map((ss) => `/${ss.join('/')}`),
)
const QUERY_KEYS = [
  'group',
  'topic',
  'detailed',
  'topicName',
  'consumerGroup',
  'deleted',
  'permanent',
  'subjectPrefix',
  'offset',
  'limit',
  'latestOnly',
  'verbose',
  'defaultToGlobal',
]
const query = fc
  .array(fc.tuple(fc.constantFrom(...QUERY_KEYS), segment), { maxLength: 3 })
  .map((kv) => (kv.length ? `?${kv.map(([k, v]) => `${k}=${v}`).join('&')}` : ''))
const jsonValue = fc.oneof(nasty, fc.integer(), fc.constantFrom(99999999999, -1, 2 ** 53, 1e308, true, false, null), fc.constant(AVRO))
const BODY_KEYS = [
  'consumerGroup',
  'topicName',
  'partitionId',
  'onlyStuckAhead',
  'allGroups',
  'schema',
  'schemaType',
  'references',
  'compatibility',
  'consumergroup',
]
const body = fc.oneof(
  fc.constant(undefined),
  fc.dictionary(fc.constantFrom(...BODY_KEYS), jsonValue, { maxKeys: 4 }).map((o) => JSON.stringify(o)),
  fc.json({ maxDepth: 2 }),
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
  fc.constantFrom('{"consumerGroup":"a\\ud800b","topicName":"x"}', '{"schema":"\\u0000"}', '{', '[]', 'null', '{"allGroups":true}'),
  // well-formed ones, so authorized requests get past validation and change things
  fc.constantFrom(JSON.stringify({ schema: AVRO }), '{"compatibility":"NONE"}', '{"consumerGroup":"g1"}', '{"consumerGroup":"g2","topicName":"fz"}'),
)

interface Probe {
  method: string
  url: string
  headers: Record<string, string>
  body: string | Buffer | undefined
  /** token and Host both right: the only requests allowed to change anything */
  authorized: boolean
  /** the console's page or bundle asked for from an allowed Host: served without credentials (decision console-009) */
  publicPage: boolean
}

const probe = fc
  .record({
    // node:http itself answers 400 to unknown methods and a missing Host: rare here, so most requests reach the routes
    method: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE') },
      { weight: 1, arbitrary: fc.constantFrom('PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'FOO') },
    ),
    path,
    query,
    token: fc.constantFrom('right', 'right', 'right', 'wrong', 'none', 'basic'),
    host: fc.constantFrom('ok', 'ok', 'ok', 'ok', 'ok', 'evil.example', 'localhost.evil.example', 'localhost', '127.0.0.1.nip.example'),
    origin: fc.constantFrom(undefined, undefined, undefined, undefined, 'http://evil.example', 'null', 'self'),
    type: fc.constantFrom(
      'application/json',
      'application/json',
      'application/vnd.schemaregistry.v1+json',
      'text/plain',
      'application/x-www-form-urlencoded',
      undefined,
    ),
    body,
    topicIn: fc.boolean(),
  })
  .map((r): Probe => {
    const url = new URL(server.url)
    const headers: Record<string, string> = {}
    if (r.token === 'right') headers.authorization = `Bearer ${TOKEN}`
    if (r.token === 'wrong') headers.authorization = `Bearer ${TOKEN.slice(1)}`
    if (r.token === 'basic') headers.authorization = `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}`
    if (r.host !== 'ok') headers.host = r.host
    if (r.origin) headers.origin = r.origin === 'self' ? server.url : r.origin
    if (r.type) headers['content-type'] = r.type
    const q = r.topicIn && r.query === '' ? `?topic=${encodeURIComponent(topic)}` : r.query
    const hostAllowed = r.host === 'ok' || r.host === 'localhost'
    // the path as the client sends it: the URL parser resolves dot segments (`/..` and `/%2e%2e` are `/`)
    const sent = new URL(`${url.origin}${r.path}${q}`)
    const publicPage =
      hostAllowed && (r.method === 'GET' || r.method === 'HEAD') && (sent.pathname === '/' || sent.pathname.startsWith('/console/assets/'))
    return { method: r.method, url: sent.href, headers, body: r.body, authorized: r.token === 'right' && hostAllowed, publicPage }
  })

/** What a well-behaved client sends (right token and Host, JSON), to known routes: these may change data. */
const wellFormed = fc
  .record({
    route: fc.constantFrom(
      ['PUT', `${M}/consumers`, '{"consumerGroup":"g3","topicName":"%TOPIC%"}'],
      ['DELETE', `${M}/consumers?consumerGroup=g3&topicName=%TOPIC%`, undefined],
      ['POST', `${M}/consumer/offsets/reset`, '{"consumerGroup":"g1","topicName":"%TOPIC%","onlyStuckAhead":false}'],
      ['POST', `${M}/consumer/offsets/reset`, '{"allGroups":true}'],
      ['POST', '/schema-registry/api/subjects/fz-s/versions', JSON.stringify({ schema: AVRO })],
      ['PUT', '/schema-registry/api/config/fz-s', '{"compatibility":"NONE"}'],
      ['DELETE', '/schema-registry/api/subjects/fz-s', undefined],
      ['DELETE', '/schema-registry/api/subjects/fz-s?permanent=true', undefined],
    ),
    body,
    keepBody: fc.boolean(),
  })
  .map(({ route: [method, path, good], body: other, keepBody }): Probe => ({
    method: method!,
    url: `${new URL(server.url).origin}${path!.replace('%TOPIC%', encodeURIComponent(topic))}`,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: keepBody || good === undefined ? good?.replace('%TOPIC%', topic) : other,
    authorized: true,
    publicPage: false,
  }))

beforeAll(async () => {
  topic = await t.createTopic(2, 'fz')
  const producer = await t.producer()
  await producer.send({ topic, messages: [{ value: 'a' }, { value: 'b' }] })
  const admin = t.kafka.admin()
  await admin.connect()
  await admin.setOffsets({ groupId: 'g1', topic, partitions: [{ partition: 0, offset: '1' }] })
  await admin.disconnect()
  const reg = await registryHandler.registry()
  await reg.register('subj', { schema: AVRO })
  server = await startOpsServer({ kafka: t.kafka, port: 0, registryHandler, token: TOKEN })
})

afterAll(async () => {
  await server?.close()
  await registryHandler.close()
})

describe('HTTP fuzz', () => {
  it(
    `${runs(RUNS)} random requests: never a 5xx, and nothing changes but through authorized 2xx requests`,
    async () => {
      const statuses = new Map<number, number>()
      let changed = 0
      let before = await content()
      await fc.assert(
        fc.asyncProperty(fc.oneof({ weight: 3, arbitrary: probe }, { weight: 1, arbitrary: wellFormed }), async (p) => {
          const res = await raw(p.url, p.method, { headers: p.headers, body: p.body })
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
          const where = `${p.method} ${p.url.slice(0, 200)} ${JSON.stringify(p.headers)} -> ${res.status} ${res.text.slice(0, 300)}`
          expect(res.status, where).toBeLessThan(500)
          if (!p.authorized && !p.publicPage) expect(res.status, where).toBeGreaterThanOrEqual(400)
          const after = await content()
          if (res.status >= 400 || !p.authorized) expect(after, where).toEqual(before)
          else if (JSON.stringify(after) !== JSON.stringify(before)) changed++
          before = after
        }),
        { numRuns: runs(RUNS), interruptAfterTimeLimit: scaledMs(120_000), endOnFailure: true },
      )
      console.log(
        `fuzz: ${runs(RUNS)} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}, ${changed} authorized requests changed data`,
      )
      // the generator reaches the routes, not only the gate, and valid requests do change data
      expect(statuses.get(200)).toBeGreaterThan(0)
      expect(changed).toBeGreaterThan(0)
      expect(statuses.get(401)).toBeGreaterThan(0)
    },
    scaledMs(180_000),
  )
})
