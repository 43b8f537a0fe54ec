// The start lock: processes starting on one data directory take turns, so it only ever gets one server.
import { randomBytes } from 'node:crypto'
import { constants as fsc, promises as fs, statSync } from 'node:fs'
import { setTimeout as delay } from 'node:timers/promises'
import { isAlive } from './postmaster.js'

const LOCK_TIMEOUT_MS = 120_000

/** O_EXCL lock file holding the owner's pid; a dead owner's lock is taken over. */
export async function acquireLock(file: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + LOCK_TIMEOUT_MS
  const token = `${process.pid} ${randomBytes(6).toString('hex')}`
  for (;;) {
    try {
      const handle = await fs.open(file, fsc.O_CREAT | fsc.O_EXCL | fsc.O_WRONLY, 0o644)
      await handle.writeFile(token)
      await handle.close()
      return async () => {
        // only remove our own lock (it may have been taken over if we were presumed dead)
        if ((await fs.readFile(file, 'utf8').catch(() => '')) === token) await fs.rm(file, { force: true })
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    const content = await fs.readFile(file, 'utf8').catch(() => undefined)
    if (content !== undefined) {
      const owner = Number.parseInt(content, 10)
      const orphaned = Number.isInteger(owner) ? !isAlive(owner) : ageMs(file) > 5000
      // re-read right before removing so a lock re-taken in between is left alone
      if (orphaned && (await fs.readFile(file, 'utf8').catch(() => undefined)) === content) {
        await fs.rm(file, { force: true })
        continue
      }
    }
    if (Date.now() > deadline) throw new Error(`embedded PostgreSQL: timed out waiting for ${file} (held by ${content})`)
    await delay(50)
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs
  } catch {
    return 0
  }
}
