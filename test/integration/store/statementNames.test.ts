// Prepared statements are named per connection: one connection that serves two schemas (a caller's transaction
// through sendWith, the CLI) must get a distinct prepared statement for each schema's text, under a readable name.
import { expect, it } from 'vitest'
import { tablesFor } from '../../../src/db/tables.js'
import { listTopics } from '../../../src/store/topics.js'
import { useTestKafka } from '../../helpers/kafka.js'

const a = useTestKafka('statement_names_a')
const b = useTestKafka('statement_names_b')

it('one connection runs the same statement for two schemas, each prepared under its own readable name', async () => {
  const topicA = await a.createTopic(1, 'only-in-a')
  const topicB = await b.createTopic(2, 'only-in-b')
  const client = await a.db.connect()
  const inA = await listTopics(client, tablesFor(a.db.schema, 'metadata_queue'))
  const inB = await listTopics(client, tablesFor(b.db.schema, 'metadata_queue'))
  expect(inA.map((x) => x.name)).toEqual([topicA])
  expect(inB.map((x) => x.name)).toEqual([topicB])
  const prepared = await client.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements ORDER BY name')
  const names = prepared.rows.map((r) => r.name)
  expect(names).toHaveLength(2)
  for (const name of names) expect(name).toMatch(/^pgq_topics_all_[0-9a-f]{8}$/)
  expect(prepared.rows.find((r) => r.statement.includes(a.db.schema))?.name).not.toBe(
    prepared.rows.find((r) => r.statement.includes(b.db.schema))?.name,
  )
})
