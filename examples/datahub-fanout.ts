// DataHub's fan-out: GMS writes every metadata change to MetadataChangeLog_Versioned_v1; the MAE consumer's base
// group (generic-mae-consumer-job-client: search and graph indexes) and hook groups split off with a consumer
// group suffix (e.g. SIBLINGS_HOOK_CONSUMER_GROUP_SUFFIX, INCIDENTS_HOOK_CONSUMER_GROUP_SUFFIX) each read the
// whole topic at their own pace. Members of one group share the partitions; every group gets every message.
// These are DataHub's own names in DataHub's own tables (schema `queue`, prefix `metadata_queue`), so a DataHub
// deployment on pgQueue sees the same topic and groups. (Real MCLs are Avro with a schema registry: see
// examples/avro.ts; this example sends JSON to stay short.)
//
//   npx tsx examples/datahub-fanout.ts
//
// transports: pgqueue
import assert from 'node:assert/strict'
import { Kafka, logLevel, type Consumer } from 'kafkajs-pgqueue'

const TOPIC = 'MetadataChangeLog_Versioned_v1'
const BASE_GROUP = 'generic-mae-consumer-job-client'
const HOOK_GROUPS = [`${BASE_GROUP}-siblings`, `${BASE_GROUP}-incidents`]

async function main(): Promise<void> {
  const kafka = new Kafka({ clientId: 'datahub-fanout', logLevel: logLevel.WARN, pgqueue: { enabled: true } })
  // DataHub's names are fixed, so the topic and groups outlive this run: tag this run's changes and ignore others
  const run = `${Date.now().toString(36)}-${process.pid}`
  const admin = kafka.admin()
  const producer = kafka.producer() // GMS
  await Promise.all([admin.connect(), producer.connect()])

  // two replicas of the MAE consumer share the base group; one consumer per hook group
  const members: Array<{ name: string; groupId: string; consumer: Consumer }> = [
    { name: 'mae-consumer-1', groupId: BASE_GROUP },
    { name: 'mae-consumer-2', groupId: BASE_GROUP },
    ...HOOK_GROUPS.map((groupId) => ({ name: groupId.slice(BASE_GROUP.length + 1) + '-hook', groupId })),
  ].map((m) => ({ ...m, consumer: kafka.consumer({ groupId: m.groupId, sessionTimeout: 10_000, heartbeatInterval: 1_000 }) }))

  const received = new Map<string, string[]>(members.map((m) => [m.name, []]))
  const assignment = new Map<string, number[]>()
  try {
    // DataHub creates it with 1 partition by default; 2 here so the two MAE replicas both have work
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }] })
    const partitions = (await admin.fetchTopicMetadata({ topics: [TOPIC] })).topics[0].partitions.map((p) => p.partitionId)

    for (const m of members) {
      await m.consumer.connect()
      m.consumer.on(m.consumer.events.GROUP_JOIN, ({ payload }) => assignment.set(m.name, payload.memberAssignment[TOPIC] ?? []))
      // a new group starts at the beginning: nothing is missed between subscribing and the first change
      await m.consumer.subscribe({ topic: TOPIC, fromBeginning: true })
      await m.consumer.run({
        eachMessage: async ({ message }) => {
          const change = JSON.parse(message.value!.toString())
          if (change.run === run) received.get(m.name)!.push(change.entityUrn + '/' + change.aspectName)
        },
      })
    }
    // produce once every group holds all partitions: each group's members split them without overlap
    await waitUntil(10_000, 'every group to hold all partitions', () =>
      [BASE_GROUP, ...HOOK_GROUPS].every((g) => {
        const held = members.filter((m) => m.groupId === g).flatMap((m) => assignment.get(m.name) ?? [])
        return held.length === partitions.length && partitions.every((p) => held.includes(p))
      }),
    )
    console.log(
      `groups on ${TOPIC}:`,
      members.map((m) => `${m.groupId}[${m.name}: partitions ${(assignment.get(m.name) ?? []).join(',') || 'none'}]`).join(' '),
    )

    // GMS: one MCL per aspect change, keyed by entity urn (all changes of an entity stay in order)
    const datasets = ['orders', 'customers', 'payments', 'shipments'].map((t) => `urn:li:dataset:(urn:li:dataPlatform:postgres,shop.${t},PROD)`)
    const changes = datasets.flatMap((entityUrn) =>
      ['schemaMetadata', 'ownership', 'globalTags'].map((aspectName) => ({ entityUrn, aspectName, changeType: 'UPSERT', run })),
    )
    await producer.send({ topic: TOPIC, messages: changes.map((c) => ({ key: c.entityUrn, value: JSON.stringify(c) })) })
    console.log(`GMS emitted ${changes.length} MetadataChangeLogs`)

    const groupTotal = (g: string) => members.filter((m) => m.groupId === g).reduce((n, m) => n + received.get(m.name)!.length, 0)
    await waitUntil(15_000, 'every group to receive every change', () => [BASE_GROUP, ...HOOK_GROUPS].every((g) => groupTotal(g) >= changes.length))

    const expected = changes
      .map((c) => c.entityUrn + '/' + c.aspectName)
      .sort()
      .join()
    for (const g of [BASE_GROUP, ...HOOK_GROUPS]) {
      const got = members.filter((m) => m.groupId === g).flatMap((m) => received.get(m.name)!)
      assert.ok(got.length === changes.length && [...got].sort().join() === expected, `${g} received each change exactly once (${got.length})`)
      console.log(
        `  ${g}: ${got.length} changes`,
        members
          .filter((m) => m.groupId === g)
          .map((m) => `(${m.name}: ${received.get(m.name)!.length})`)
          .join(' '),
      )
    }
    console.log(`datahub-fanout: ${changes.length} changes reached all ${1 + HOOK_GROUPS.length} groups; the base group's 2 members shared them`)
  } finally {
    await Promise.all(members.map((m) => m.consumer.disconnect()))
    await Promise.all([producer.disconnect(), admin.disconnect()])
  }
}

async function waitUntil(ms: number, what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + ms
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
