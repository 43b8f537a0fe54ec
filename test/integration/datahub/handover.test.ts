// Handing a group over from DataHub's consumers to ours (issue 34 item 4): a member of ours joining a group whose
// DataHub consumers stopped seconds ago found their registration (fresh for 30 s after DataHub's last poll) and
// crashed with the non-retriable INCONSISTENT_GROUP_PROTOCOL. It now waits, says once what for and until when, and
// joins once the registration lapsed; a DataHub consumer still polling keeps the group refused (sharedGroup.test.ts).
import { expect, it } from 'vitest'
import { uniqueName } from '../../helpers/kafka.js'
import { useSharingFixture } from './sharing.js'

const f = useSharingFixture('dh_handover')

it('a consumer of ours joining right after the DataHub consumers stopped waits for them to be gone, then consumes', async () => {
  const topic = await f.createTopic(2, 'dh-handover')
  const group = uniqueName('handover')
  const producer = await f.producer()
  const dataHub = f.dataHubConsumer(topic, group)
  await dataHub.waitForLine((l) => l === 'ready')
  await producer.send({ topic, messages: Array.from({ length: 10 }, (_, i) => ({ key: `k${i % 4}`, value: `old${i}` })) })
  await dataHub.waitForLine(() => dataHub.lines.filter((l) => l.startsWith('m ')).length >= 10, 20_000)
  dataHub.proc.kill('SIGTERM')
  await dataHub.exited
  // DataHub last polled 25 s ago: its registration counts for 5 s more (the wait is real, the test short)
  await f.sql(`UPDATE ${f.tables.consumerRegistration} SET last_heartbeat_at = now() - interval '25 seconds' WHERE consumer_group = $1`, [group])
  await producer.send({ topic, messages: Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: `new${i}` })) })

  const warnings: string[] = []
  // before the fix: run() rejected with INCONSISTENT_GROUP_PROTOCOL and this failed
  const got = await f.consumeOurs(topic, 5, { groupId: group, warnings, timeoutMs: 30_000 })
  expect(got.map((m) => m.value).sort()).toEqual(['new0', 'new1', 'new2', 'new3', 'new4'])
  expect(warnings.filter((w) => w.startsWith('Waiting for the DataHub consumers'))).toHaveLength(1)
}, 60_000)
