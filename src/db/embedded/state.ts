// embedded.json beside the cluster: the superuser password and the port last used.
import { randomBytes } from 'node:crypto'
import { existsSync, promises as fs } from 'node:fs'
import path from 'node:path'

export interface State {
  port?: number
  password: string
}

export async function readState(dataDir: string, clusterDir: string): Promise<State> {
  const file = path.join(dataDir, 'embedded.json')
  try {
    const parsed = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<State>
    if (typeof parsed.password === 'string' && parsed.password) return { password: parsed.password, port: parsed.port }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`embedded PostgreSQL: unreadable ${file}: ${(err as Error).message}`, { cause: err })
  }
  if (existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    throw new Error(`embedded PostgreSQL: ${clusterDir} exists but ${file} (its password) is missing; remove ${dataDir} to start afresh`)
  }
  const state: State = { password: randomBytes(18).toString('base64url') }
  await writeState(dataDir, state)
  return state
}

export async function writeState(dataDir: string, state: State): Promise<void> {
  const file = path.join(dataDir, 'embedded.json')
  await fs.writeFile(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 })
  await fs.rename(`${file}.tmp`, file)
}
