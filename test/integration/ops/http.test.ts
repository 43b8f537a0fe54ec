import http, { type IncomingHttpHeaders } from 'node:http'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { attachConsumerMetrics, attachProducerMetrics, startOpsServer, type OpsServer } from '../../../src/ops/index.js'
import { createSchemaRegistryServer } from '../../../src/registry/http/server.js'
import { deferred } from '../../helpers/db.js'
import { uniqueName, useTestKafka } from '../../helpers/kafka.js'

const t = useTestKafka('ops_http')
const admin = t.kafka.admin()
const registryHandler = createSchemaRegistryServer({ kafka: t.kafka, basePath: '/schema-registry/api' })
let server: OpsServer
let base: string
beforeAll(async () => {
  await admin.connect()
  server = await startOpsServer({ kafka: t.kafka, port: 0, registryHandler })
  base = `${server.url}/openapi/operations/messaging`
})
afterAll(async () => {
  await server?.close()
  await registryHandler.close()
  await admin.disconnect()
})

async function call(method: string, url: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, json: text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text }
}

async function newTopic(partitions = 2): Promise<string> {
  const topic = uniqueName('http')
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }] })
  return topic
}

describe('ops HTTP API', () => {
  it('GET /health is 200 and UP', async () => {
    const { status, json } = await call('GET', `${server.url}/health`)
    expect(status).toBe(200)
    expect(json).toMatchObject({ status: 'UP', transport: 'pgqueue', database: { reachable: true } })
  })

  it('GET /transport names the transport and the schema', async () => {
    expect(await call('GET', `${base}/transport`)).toEqual({
      status: 200,
      json: { transport: 'pgqueue', schema: t.db.schema, tablePrefix: 'metadata_queue' },
    })
  })

  it('/metrics exposes producer, consumer and lag metrics after consuming', async () => {
    const topic = await newTopic(1)
    const groupId = uniqueName('g')
    const producer = await t.producer()
    const detachProducer = attachProducerMetrics(producer, server.handler.metrics)
    await producer.send({ topic, messages: [{ value: 'a' }, { value: 'b' }, { value: 'c' }] })
    detachProducer()
    await producer.send({ topic, messages: [{ value: 'not counted' }] })

    const consumer = await t.consumer({ groupId })
    attachConsumerMetrics(consumer, server.handler.metrics)
    const done = deferred()
    let seen = 0
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({ eachMessage: async () => void (++seen === 4 && done.resolve()) })
    await done.promise
    await consumer.stop()

    const res = await fetch(`${server.url}/metrics`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/)
    const text = await res.text()
    expect(text).toContain(`messaging_client_sent_messages_total{messaging_system="pgqueue",topic="${topic}"} 3`)
    expect(text).toContain(`messaging_client_consumed_messages_total{messaging_system="pgqueue",topic="${topic}",consumer_group="${groupId}"} 4`)
    expect(text).toMatch(new RegExp(`messaging_process_duration_seconds_count\\{[^}]*consumer_group="${groupId}"[^}]*\\} \\d+`))
    expect(text).toContain(`messaging_consumer_lag{messaging_system="pgqueue",consumer_group="${groupId}",topic="${topic}"} 0`)
    expect(text).toContain(`messaging_consumer_stuck_ahead_partitions{messaging_system="pgqueue",consumer_group="${groupId}",topic="${topic}"} 0`)
    expect(text).toContain('messaging_consumer_lag_collection_success 1')
    for (const name of ['messaging_queue_time_seconds', 'messaging_consumer_crashes_total', 'pgqueue_maintenance_runs_total']) {
      expect(text).toContain(`# TYPE ${name}`)
    }
  })

  it('GET /consumer/lag answers with DataHub’s envelope, partitions only when detailed', async () => {
    const topic = await newTopic()
    const groupId = uniqueName('g')
    await (
      await t.producer()
    ).send({
      topic,
      messages: [
        { partition: 0, value: '1' },
        { partition: 0, value: '2' },
      ],
    })
    await admin.setOffsets({
      groupId,
      topic,
      partitions: [
        { partition: 0, offset: '1' },
        { partition: 1, offset: '0' },
      ],
    })

    const plain = await call('GET', `${base}/consumer/lag?group=${groupId}`)
    expect(plain).toEqual({
      status: 200,
      json: {
        transport: 'pgqueue',
        consumerGroups: { [groupId]: { [topic]: { metrics: { totalLag: 1, maxLag: 1, partitions: 2, stuckAhead: 0 } } } },
      },
    })
    const detailed = await call('GET', `${base}/consumer/lag?group=${groupId}&topic=${topic}&detailed=true`)
    expect(detailed.json.consumerGroups[groupId][topic].partitions).toEqual({
      '0': { offset: 1, high: 2, lag: 1 },
      '1': { offset: 0, high: 0, lag: 0 },
    })
  })

  it('POST /consumer/offsets/reset resets STUCK_AHEAD cells and reports them DataHub-style', async () => {
    const topic = await newTopic(1)
    const groupId = uniqueName('g')
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '0' }] })
    await t.db.pool.query(`UPDATE ${t.db.schema}.metadata_queue_consumer_offset SET offset_value = 9 WHERE consumer_group = $1`, [groupId])
    const lag = await call('GET', `${base}/consumer/lag?group=${groupId}&detailed=true`)
    expect(lag.json.consumerGroups[groupId][topic].partitions['0']).toEqual({ offset: 9, high: 0, lag: 0, aheadBy: 9, metadata: 'STUCK_AHEAD' })

    const reset = await call('POST', `${base}/consumer/offsets/reset`, { consumerGroup: groupId, topicName: topic, onlyStuckAhead: true })
    expect(reset).toEqual({
      status: 200,
      json: {
        transport: 'pgqueue',
        partitionsUpdated: 1,
        resets: [{ consumerGroup: groupId, topicName: topic, partitionId: 0, previousOffset: 9, newOffset: 0, maxSeq: 0 }],
      },
    })
    const again = await call('POST', `${base}/consumer/offsets/reset`, { consumerGroup: groupId })
    expect(again.json).toMatchObject({ partitionsUpdated: 0, resets: [] })
  })

  it('PUT, GET and DELETE /consumers manage registrations', async () => {
    const topic = await newTopic(1)
    expect(await call('PUT', `${base}/consumers`, { consumerGroup: 'ops-group', topicName: topic })).toEqual({
      status: 200,
      json: { registered: true },
    })
    const list = await call('GET', `${base}/consumers?topicName=${topic}`)
    expect(list.status).toBe(200)
    expect(list.json).toEqual([
      { consumerGroup: 'ops-group', topicName: topic, registeredAt: expect.any(Number), lastHeartbeatAt: expect.any(Number) },
    ])
    expect(await call('DELETE', `${base}/consumers?consumerGroup=ops-group&topicName=${topic}`)).toEqual({ status: 200, json: { deleted: true } })
    expect((await call('GET', `${base}/consumers?topicName=${topic}`)).json).toEqual([])
  })

  it('answers errors as JSON with meaningful status codes', async () => {
    const missing = uniqueName('missing')
    const topic = await newTopic(1)
    const cases: Array<[string, string, unknown, number]> = [
      ['GET', `${base}/consumer/lag?topic=${missing}`, undefined, 404],
      ['GET', `${base}/consumers?topicName=${missing}`, undefined, 404],
      ['PUT', `${base}/consumers`, { consumerGroup: 'g', topicName: missing }, 404],
      ['POST', `${base}/consumer/offsets/reset`, { consumerGroup: 'g', topicName: missing }, 404],
      ['GET', `${base}/consumer/lag?detailed=maybe`, undefined, 400],
      ['PUT', `${base}/consumers`, { topicName: topic }, 400],
      ['PUT', `${base}/consumers`, '{not json', 400],
      ['POST', `${base}/consumer/offsets/reset`, { partitionId: 'one', topicName: topic }, 400],
      ['POST', `${base}/consumer/offsets/reset`, { onlyStuckAhead: 'yes' }, 400],
      ['DELETE', `${base}/consumers?topicName=${topic}`, undefined, 400],
      ['GET', `${base}/nothing-here`, undefined, 404],
      ['GET', `${server.url}/nowhere`, undefined, 404],
      ['POST', `${base}/consumer/lag`, {}, 405],
      ['DELETE', `${server.url}/health`, undefined, 405],
    ]
    for (const [method, url, body, expected] of cases) {
      const { status, json } = await call(method, url, body)
      expect({ method, url, status }).toEqual({ method, url, status: expected })
      expect(json).toMatchObject({ status: expected, error: expect.any(String) })
    }
  })

  it('routes /schema-registry/api to the mounted registry', async () => {
    const res = await call('GET', `${server.url}/schema-registry/api/subjects`)
    expect(res).toEqual({ status: 200, json: [] })
  })
})

describe('ops HTTP API options', () => {
  it('serves under a base path, asks `authorize` before mutations and rewrites the registry mount', async () => {
    const seen: string[] = []
    const fakeRegistry = Object.assign(
      (req: { url?: string }, res: { end(body: string): void }) => {
        seen.push(req.url ?? '')
        res.end('registry')
      },
      { basePath: '' },
    )
    const s = await startOpsServer({
      kafka: t.kafka,
      port: 0,
      basePath: '/ops/',
      registryHandler: fakeRegistry as never,
      authorize: (req) => req.headers.authorization === 'Bearer ok',
    })
    try {
      expect(s.url).toMatch(/\/ops$/)
      expect((await fetch(`${s.url}/health`)).status).toBe(200)
      expect((await fetch(`${s.url.replace(/\/ops$/, '')}/health`)).status).toBe(404)
      const body = JSON.stringify({ consumerGroup: 'g', topicName: 'whatever' })
      const put = (headers: Record<string, string>) =>
        fetch(`${s.url}/openapi/operations/messaging/consumers`, { method: 'PUT', headers: { 'content-type': 'application/json', ...headers }, body })
      expect((await put({})).status).toBe(403)
      expect((await put({ authorization: 'Bearer ok' })).status).toBe(404)
      expect(await (await fetch(`${s.url}/schema-registry/api/subjects?deleted=true`)).text()).toBe('registry')
      expect(seen).toEqual(['/subjects?deleted=true'])
    } finally {
      await s.close()
    }
  })
})

describe('console API compression', () => {
  const get = (path: string, acceptEncoding?: string) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const headers = acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }
      http
        .get(`${server.url}${path}`, { headers }, (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }))
        })
        .on('error', reject)
    })

  it('gzips a JSON reply of 1 KiB or more when the client accepts gzip, and only then', async () => {
    // enough topics for the list to pass the threshold
    await Promise.all(Array.from({ length: 20 }, () => newTopic(1)))
    const plain = await get('/console/api/topics')
    const zipped = await get('/console/api/topics', 'gzip, deflate, br')
    expect([plain.status, zipped.status]).toEqual([200, 200])
    expect(plain.body.length).toBeGreaterThanOrEqual(1024)
    expect(plain.headers['content-encoding']).toBeUndefined()
    expect(zipped.headers['content-encoding']).toBe('gzip')
    for (const r of [plain, zipped]) {
      expect(r.headers.vary).toBe('accept-encoding')
      expect(Number(r.headers['content-length'])).toBe(r.body.length)
    }
    expect(JSON.parse(gunzipSync(zipped.body).toString('utf8'))).toEqual(JSON.parse(plain.body.toString('utf8')))
    expect(zipped.body.length).toBeLessThan(plain.body.length / 2)
  })

  it('sends a small reply as it is, and compresses nothing outside the console API', async () => {
    const small = await get('/console/api/session', 'gzip')
    expect(small.status).toBe(200)
    expect(small.headers['content-encoding']).toBeUndefined()
    const health = await get('/health', 'gzip')
    expect(health.headers['content-encoding']).toBeUndefined()
    expect(health.headers.vary).toBeUndefined()
  })
})
