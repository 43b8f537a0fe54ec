// The HTTP APIs (ops and the mounted schema registry) probed as an attacker would: a server whose authorize says no,
// a web page the operator opens (cross-site POST, DNS rebinding), typos in bodies, values PostgreSQL rejects.
// Every refused request is checked to have changed nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startOpsServer, type OpsServer } from '../../../src/ops/index.js'
import { createSchemaRegistryServer, startSchemaRegistry } from '../../../src/registry/http/server.js'
import { useTestKafka } from '../../helpers/kafka.js'
import { jsonRequest, raw } from './support.js'

const t = useTestKafka('security_http')
const TOKEN = 'tok-0123456789abcdef-security'
const registryHandler = createSchemaRegistryServer({ kafka: t.kafka, basePath: '/schema-registry/api' })
const servers: OpsServer[] = []
let open: OpsServer
let topic: string
let seeded: Record<string, number>
const M = '/openapi/operations/messaging'
const SCHEMA = JSON.stringify({ type: 'record', name: 'R', fields: [{ name: 'a', type: 'string' }] })

async function serve(options: Parameters<typeof startOpsServer>[0] extends infer O ? Partial<O> : never): Promise<OpsServer> {
  const s = await startOpsServer({ kafka: t.kafka, port: 0, registryHandler, ...options })
  servers.push(s)
  return s
}

/** committed offset per group for the test topic's partition 0 */
async function offsets(): Promise<Record<string, number>> {
  const { rows } = await t.db.pool.query(
    `SELECT o.consumer_group AS g, o.offset_value::int AS v FROM "${t.db.schema}".metadata_queue_consumer_offset o
     JOIN "${t.db.schema}".metadata_queue_topic tp ON tp.id = o.topic_id WHERE tp.topic_name = $1`,
    [topic],
  )
  return Object.fromEntries(rows.map((r) => [r.g, r.v]))
}

const subjects = async () =>
  (await t.db.pool.query(`SELECT count(*)::int AS n FROM "${t.db.schema}".metadata_queue_schema_subject`).catch(() => ({ rows: [{ n: -1 }] })))
    .rows[0].n

beforeAll(async () => {
  topic = await t.createTopic(1, 'sec-http')
  const producer = await t.producer()
  await producer.send({ topic, messages: [{ value: 'a' }, { value: 'b' }, { value: 'c' }, { value: 'd' }] })
  const admin = t.kafka.admin()
  await admin.connect()
  // g1 and g2 lag by 2 and are not STUCK_AHEAD: only a reset with onlyStuckAhead: false would move them
  for (const groupId of ['g1', 'g2']) await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '2' }] })
  await admin.disconnect()
  seeded = await offsets()
  open = await serve({})
})

afterAll(async () => {
  for (const s of servers) await s.close()
  await registryHandler.close()
})

describe('one authorization path for every route', () => {
  it('authorize is asked before the mounted registry changes anything (item 2)', async () => {
    const s = await serve({ authorize: () => false })
    const reg = `${s.url}/schema-registry/api`
    const before = await subjects()
    const probes = [
      await jsonRequest(`${reg}/subjects/x/versions`, 'POST', { schema: SCHEMA }, { 'content-type': 'application/vnd.schemaregistry.v1+json' }),
      await jsonRequest(`${reg}/config`, 'PUT', { compatibility: 'NONE' }),
      await raw(`${reg}/subjects/x?permanent=true`, 'DELETE'),
      await jsonRequest(`${s.url}${M}/consumer/offsets/reset`, 'POST', { consumerGroup: 'g1', onlyStuckAhead: false, topicName: topic }),
    ]
    console.log(`http: authorize=false probes -> ${probes.map((p) => p.status).join(', ')}`)
    expect(probes.map((p) => p.status)).toEqual([403, 403, 403, 403])
    expect(probes[0]!.json).toMatchObject({ error_code: 403 })
    expect(await subjects()).toBe(before)
    expect((await jsonRequest(`${reg}/config`, 'GET')).json).toEqual({ compatibilityLevel: 'BACKWARD' })
    // reads stay open to an authorize that only guards changes
    expect((await raw(`${s.url}${M}/consumer/lag`, 'GET')).status).toBe(200)
  })

  it('a token guards every route, reads and the registry included; the wrong one is 401', async () => {
    const s = await serve({ token: TOKEN })
    const paths = ['/health', '/metrics', `${M}/consumer/lag`, `${M}/consumers`, '/schema-registry/api/subjects']
    const anonymous = await Promise.all(paths.map((p) => raw(`${s.url}${p}`, 'GET')))
    const wrong = await Promise.all(paths.map((p) => raw(`${s.url}${p}`, 'GET', { headers: { authorization: `Bearer ${TOKEN}x` } })))
    const right = await Promise.all(paths.map((p) => raw(`${s.url}${p}`, 'GET', { headers: { authorization: `Bearer ${TOKEN}` } })))
    console.log(`http: token anonymous ${anonymous.map((r) => r.status)} wrong ${wrong.map((r) => r.status)} right ${right.map((r) => r.status)}`)
    expect(anonymous.map((r) => r.status)).toEqual(paths.map(() => 401))
    expect(anonymous[0]!.headers['www-authenticate']).toBe('Bearer')
    expect(wrong.map((r) => r.status)).toEqual(paths.map(() => 401))
    expect(right.map((r) => r.status)).toEqual(paths.map(() => 200))
    const reset = await jsonRequest(`${s.url}${M}/consumer/offsets/reset`, 'POST', { consumerGroup: 'g1', topicName: topic, onlyStuckAhead: false })
    expect(reset.status).toBe(401)
    expect(await offsets()).toEqual(seeded)
  })

  it('refuses to listen on a non-loopback address without credentials, and weak tokens', async () => {
    await expect(startOpsServer({ kafka: t.kafka, port: 0, host: '0.0.0.0' })).rejects.toThrow(/without authentication/)
    await expect(startOpsServer({ kafka: t.kafka, port: 0, host: '::' })).rejects.toThrow(/without authentication/)
    await expect(startOpsServer({ kafka: t.kafka, port: 0, token: 'short' })).rejects.toThrow(/at least 16 characters/)
  })
})

describe('the stand-alone schema registry passes the same gate', () => {
  it('Host, Origin, media type, token; refuses a non-loopback host without credentials', async () => {
    await expect(startSchemaRegistry({ kafka: t.kafka, host: '0.0.0.0' })).rejects.toThrow(/without authentication/)
    const reg = await startSchemaRegistry({ kafka: t.kafka, basePath: '/schema-registry/api', token: TOKEN })
    try {
      const auth = { authorization: `Bearer ${TOKEN}` }
      const body = JSON.stringify({ schema: SCHEMA })
      const url = `${reg.url}/subjects/standalone/versions`
      const probes = {
        anonymous: await raw(`${reg.url}/subjects`, 'GET'),
        rebound: await raw(`${reg.url}/subjects`, 'GET', { headers: { ...auth, host: 'rebind.evil.example' } }),
        crossOrigin: await raw(url, 'POST', { headers: { ...auth, 'content-type': 'application/json', origin: 'http://evil.example' }, body }),
        textPlain: await raw(url, 'POST', { headers: { ...auth, 'content-type': 'text/plain' }, body }),
        ok: await raw(url, 'POST', { headers: { ...auth, 'content-type': 'application/vnd.schemaregistry.v1+json' }, body }),
      }
      expect(Object.fromEntries(Object.entries(probes).map(([k, r]) => [k, r.status]))).toEqual({
        anonymous: 401,
        rebound: 403,
        crossOrigin: 403,
        textPlain: 415,
        ok: 200,
      })
      expect(probes.anonymous.json).toMatchObject({ error_code: 401 })
    } finally {
      await reg.close()
    }
  })
})

describe('browsers: CSRF and DNS rebinding (item 3)', () => {
  it('a cross-site POST, a rebound Host or a form body type cannot reset offsets', async () => {
    const url = `${open.url}${M}/consumer/offsets/reset`
    const body = JSON.stringify({ consumerGroup: 'g1', topicName: topic, onlyStuckAhead: false })
    const probes = {
      crossOrigin: await raw(url, 'POST', { headers: { 'content-type': 'application/json', origin: 'http://evil.example' }, body }),
      rebound: await raw(url, 'POST', { headers: { 'content-type': 'application/json', host: 'rebind.evil.example' }, body }),
      textPlain: await raw(url, 'POST', { headers: { 'content-type': 'text/plain' }, body }),
      form: await raw(url, 'POST', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }),
      noType: await raw(url, 'POST', { body }),
      nullOrigin: await raw(url, 'POST', { headers: { 'content-type': 'application/json', origin: 'null' }, body }),
      crossSite: await raw(url, 'POST', { headers: { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' }, body }),
      all: await raw(url, 'POST', { headers: { 'content-type': 'text/plain', origin: 'http://evil.example', host: 'rebind.evil.example' }, body }),
    }
    console.log(
      `http: csrf probes ${Object.entries(probes)
        .map(([k, r]) => `${k}=${r.status}`)
        .join(' ')}`,
    )
    expect(Object.fromEntries(Object.entries(probes).map(([k, r]) => [k, r.status]))).toEqual({
      crossOrigin: 403,
      rebound: 403,
      textPlain: 415,
      form: 415,
      noType: 415,
      nullOrigin: 403,
      crossSite: 403,
      all: 403,
    })
    expect(await offsets()).toEqual(seeded)
    // a rebound name cannot read either; the server's own origin and loopback names can write
    expect((await raw(`${open.url}${M}/consumer/lag`, 'GET', { headers: { host: 'rebind.evil.example' } })).status).toBe(403)
    expect((await raw(`${open.url}/schema-registry/api/subjects`, 'GET', { headers: { host: 'rebind.evil.example:80' } })).status).toBe(403)
    const port = new URL(open.url).port
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      expect((await raw(`${open.url}/health`, 'GET', { headers: { host } })).status, host).toBe(200)
    }
    const same = await raw(url, 'POST', {
      headers: { 'content-type': 'application/json; charset=utf-8', origin: open.url },
      body: JSON.stringify({ consumerGroup: 'nobody' }),
    })
    expect(same.status).toBe(200)
  })

  it('allowedHosts and allowedOrigins widen the lists; the registry keeps its media types', async () => {
    const s = await serve({ allowedHosts: ['queue.internal'], allowedOrigins: ['https://console.example'] })
    expect((await raw(`${s.url}/health`, 'GET', { headers: { host: 'queue.internal:9464' } })).status).toBe(200)
    expect((await raw(`${s.url}/health`, 'GET', { headers: { host: 'other.internal' } })).status).toBe(403)
    const ok = await jsonRequest(`${s.url}${M}/consumer/offsets/reset`, 'POST', { consumerGroup: 'nobody' }, { origin: 'https://console.example' })
    expect(ok.status).toBe(200)
    const reg = await raw(`${s.url}/schema-registry/api/subjects/sec-media/versions`, 'POST', {
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ schema: SCHEMA }),
    })
    expect(reg).toMatchObject({ status: 415, json: { error_code: 415 } })
  })
})

describe('bodies and values (items 6, 7)', () => {
  it('a misspelt key is refused instead of resetting every group; all groups need "allGroups": true', async () => {
    const url = `${open.url}${M}/consumer/offsets/reset`
    // STUCK_AHEAD everywhere, so a reset would move both groups
    await t.db.pool.query(`UPDATE "${t.db.schema}".metadata_queue_consumer_offset SET offset_value = 9 WHERE consumer_group IN ('g1', 'g2')`)
    const typo = await jsonRequest(url, 'POST', { consumergroup: 'g1', onlyStuckAhead: false })
    const none = await jsonRequest(url, 'POST', {})
    const both = await jsonRequest(url, 'POST', { consumerGroup: 'g1', allGroups: true })
    console.log(`http: reset typo ${typo.status} ${typo.json?.error}; empty ${none.status} ${none.json?.error}`)
    expect([typo.status, none.status, both.status]).toEqual([400, 400, 400])
    expect(typo.json.error).toMatch(/unknown field "consumergroup"/)
    expect(none.json.error).toMatch(/allGroups/)
    expect(await offsets()).toMatchObject({ g1: 9, g2: 9 })
    const one = await jsonRequest(url, 'POST', { consumerGroup: 'g1' })
    expect(one.json.partitionsUpdated).toBe(1)
    expect(await offsets()).toMatchObject({ g1: 4, g2: 9 })
    const all = await jsonRequest(url, 'POST', { allGroups: true })
    expect(all.status).toBe(200)
    expect(await offsets()).toMatchObject({ g1: 4, g2: 4 })
  })

  it('values PostgreSQL would reject answer 400 with a clear message before any SQL; a too large body is 413', async () => {
    const reset = `${open.url}${M}/consumer/offsets/reset`
    const cases: Array<[string, Promise<{ status: number; json: any }>, number, RegExp]> = [
      ['group with NUL', raw(`${open.url}${M}/consumer/lag?group=a%00b`, 'GET'), 400, /control characters/],
      ['topic with NUL', raw(`${open.url}${M}/consumer/lag?topic=a%00b`, 'GET'), 400, /NUL/],
      [
        'partition out of int range',
        jsonRequest(reset, 'POST', { consumerGroup: 'g1', topicName: topic, partitionId: 99999999999 }),
        400,
        /between 0 and 2147483647/,
      ],
      ['negative partition', jsonRequest(reset, 'POST', { consumerGroup: 'g1', topicName: topic, partitionId: -1 }), 400, /between 0/],
      [
        '100 KB group name',
        jsonRequest(`${open.url}${M}/consumers`, 'PUT', { consumerGroup: 'g'.repeat(100_000), topicName: topic }),
        400,
        /at most 255/,
      ],
      [
        'lone surrogate group',
        jsonRequest(`${open.url}${M}/consumers`, 'PUT', `{"consumerGroup":"a\\ud800b","topicName":"${topic}"}`),
        400,
        /well-formed/,
      ],
      ['lone surrogate topic', jsonRequest(`${open.url}${M}/consumers`, 'PUT', `{"consumerGroup":"g","topicName":"a\\udfffb"}`), 400, /well-formed/],
      ['1 KB topic name', raw(`${open.url}${M}/consumers?topicName=${'t'.repeat(1000)}`, 'GET'), 400, /at most 255/],
      ['2 MB body', jsonRequest(`${open.url}${M}/consumers`, 'PUT', { consumerGroup: 'g'.repeat(2_000_000), topicName: topic }), 413, /larger than/],
    ]
    const lines: string[] = []
    for (const [name, pending, status, message] of cases) {
      const res = await pending
      lines.push(`${name}: ${res.status} ${res.json?.error}`)
      expect({ name, status: res.status }).toEqual({ name, status })
      expect(res.json.error, name).toMatch(message)
    }
    console.log(`http: bad values\n  ${lines.join('\n  ')}`)
    const { rows } = await t.db.pool.query(`SELECT count(*)::int AS n FROM "${t.db.schema}".metadata_queue_consumer_registration`)
    expect(rows[0].n).toBe(0)
  })
})
