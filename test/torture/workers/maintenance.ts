// Maintenance throughout the run: premake / drop partitions, retention with caps and aggressive retention, lease
// sweeps, back to back with a short pause, through the same fault proxy as the clients.
import { runMaintenance } from '../../../src/maintenance/run.js'
import { resolveConfig } from '../../../src/config/resolve.js'
import { Kafka } from '../../../src/kafka.js'
import type { MaintenanceSpec } from '../spec.js'
import { sleep, startWorker } from './common.js'

const w = startWorker<MaintenanceSpec>()
const { spec, rng, rec } = w

async function main() {
  const kafka = new Kafka({ clientId: spec.writer, pgqueue: { connectionString: spec.pgUrl, schema: spec.schema, enabled: false } })
  const db = await kafka.database()
  const { maintenance } = resolveConfig({ schema: spec.schema })
  w.ready()
  let runs = 0
  w.onStop(() => {
    rec.record({ k: 'stat', name: 'maintenance.runs', n: runs })
    return db.release()
  })
  while (!w.stopping) {
    await w
      .track('maintenance', () =>
        runMaintenance({ pool: db.pool, tables: db.tables, maintenance }, { batchDeleteLimit: rng.int(10, 200), dropLockTimeoutMs: 200 }),
      )
      .then(() => runs++)
      .catch(() => undefined)
    await sleep(rng.int(200, 1500))
  }
}

main().catch((e) => {
  w.recordError('main', e)
  process.exit(1)
})
