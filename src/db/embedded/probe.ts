// Talking to the embedded server over loopback TCP: does it answer, and the database the library uses.
import pg from 'pg'
import { setTimeout as delay } from 'node:timers/promises'
import { isPostgresAlive, readPostmasterPid } from './postmaster.js'
import { POSTGRES_USER } from './process.js'

export const HOST = '127.0.0.1'
const USER = POSTGRES_USER
const DATABASE = 'pgqueue'
const READY_TIMEOUT_MS = 15_000

/** Port of a live server on this cluster that answers queries, waiting while it is still starting. */
export async function findRunningServer(clusterDir: string, password: string): Promise<number | undefined> {
  const deadline = Date.now() + READY_TIMEOUT_MS
  for (;;) {
    const info = readPostmasterPid(clusterDir)
    if (!info || !isPostgresAlive(info.pid)) return undefined
    if (info.port > 0 && (await answers(info.port, password))) return info.port
    if (Date.now() > deadline) {
      throw new Error(
        `embedded PostgreSQL: pid ${info.pid} holds ${clusterDir} but does not answer on ${HOST}:${info.port}; stop it or remove the data dir`,
      )
    }
    await delay(100)
  }
}

async function answers(port: number, password: string): Promise<boolean> {
  const client = new pg.Client({ host: HOST, port, user: USER, password, database: 'postgres', connectionTimeoutMillis: 2000 })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return true
  } catch (err) {
    const code = (err as { code?: string }).code
    if (code === '28P01' || code === '28000') {
      throw new Error(`embedded PostgreSQL on port ${port} rejected the password stored in embedded.json (${code})`, { cause: err })
    }
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

/** Whether the server just spawned answers on `port` before it exits. */
export async function becomesReady(exited: Promise<void>, port: number, password: string): Promise<boolean> {
  let gone = false
  void exited.then(() => (gone = true))
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (!gone) {
    if (await answers(port, password)) return true
    if (Date.now() > deadline) throw new Error(`embedded PostgreSQL did not answer on ${HOST}:${port} within ${READY_TIMEOUT_MS} ms`)
    await delay(50)
  }
  return false
}

export async function ensureDatabase(port: number, password: string): Promise<string> {
  const client = new pg.Client({ host: HOST, port, user: USER, password, database: 'postgres' })
  client.on('error', () => {})
  await client.connect()
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE])
    if (!rowCount) {
      await client.query(`CREATE DATABASE ${DATABASE}`).catch((err: { code?: string }) => {
        // another process created it meanwhile
        if (err.code !== '42P04' && err.code !== '23505') throw err
      })
    }
  } finally {
    await client.end().catch(() => {})
  }
  return `postgres://${USER}:${encodeURIComponent(password)}@${HOST}:${port}/${DATABASE}`
}
