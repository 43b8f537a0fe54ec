// A maintenance runner in its own process (for the concurrency test). Prints one line: `report <json>`.
import pg from 'pg'
import { resolveConfig } from '../../../src/config/resolve.js'
import { tablesFor } from '../../../src/db/tables.js'
import { runMaintenance } from '../../../src/maintenance/run.js'

const env = (name: string) => {
  const v = process.env[name]
  if (!v) throw new Error(`missing ${name}`)
  return v
}

async function main() {
  const connectionString = env('PG_URL')
  const pool = new pg.Pool({ connectionString, max: 2 })
  try {
    const { maintenance } = resolveConfig({ connectionString, schema: env('PG_SCHEMA') })
    const report = await runMaintenance(
      { pool, tables: tablesFor(env('PG_SCHEMA'), 'metadata_queue'), maintenance: { ...maintenance, batchDeleteLimit: Number(env('BATCH')) } },
      { vacuum: false, maxBatchesPerStep: Number(env('MAX_BATCHES')) },
    )
    process.stdout.write(`report ${JSON.stringify(report)}\n`)
  } finally {
    await pool.end()
  }
}
main().catch((err) => {
  process.stdout.write(`error ${(err as Error).message}\n`)
  process.exit(1)
})
