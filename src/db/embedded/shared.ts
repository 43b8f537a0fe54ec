// A server shared by several processes (`shared`): each registers in users/, and the last one out stops it.
import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import path from 'node:path'
import type { EmbeddedServer } from './types.js'
import { acquireLock } from './lock.js'
import { isAlive, stopEmbeddedPostgres } from './postmaster.js'

/** Registers this process as a user (caller holds the start lock); stop() deregisters, and stops the server if last. */
export async function shareServer(dataDir: string, connectionString: string, reused: boolean): Promise<EmbeddedServer> {
  const users = path.join(dataDir, 'users')
  const me = `${process.pid}-${randomBytes(4).toString('hex')}`
  await fs.mkdir(users, { recursive: true })
  await fs.writeFile(path.join(users, me), '')
  let stopped: Promise<void> | undefined
  const stop = async () => {
    const release = await acquireLock(path.join(dataDir, 'start.lock'))
    try {
      await fs.rm(path.join(users, me), { force: true })
      let others = 0
      for (const name of await fs.readdir(users)) {
        if (isAlive(Number.parseInt(name, 10))) others++
        else await fs.rm(path.join(users, name), { force: true }) // a killed user's leftover
      }
      if (others === 0) await stopEmbeddedPostgres(dataDir)
    } finally {
      await release()
    }
  }
  return { connectionString, reused, stop: () => (stopped ??= stop()) }
}
