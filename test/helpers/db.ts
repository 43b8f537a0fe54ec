// Per-file database isolation: every test file gets its own schema in the shared PostgreSQL,
// dropped (with every pool and client the helper handed out) after the file.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, inject } from 'vitest'
import type { PgQueueOptions } from '../../src/config/types.js'
import { quoteIdent } from '../../src/db/identifiers.js'

export interface TestSchema {
  /** unique, valid identifier: t_<label>_<random> */
  readonly schema: string
  readonly connectionString: string
  /** created on first use, ended after the file */
  readonly pool: pg.Pool
  /** options for the library under test */
  readonly options: PgQueueOptions & { connectionString: string; schema: string; enabled: true }
  /** a separate connected client (ended after the file) */
  connect(): Promise<pg.Client>
}

export function uniqueSchemaName(label = 'test'): string {
  const clean =
    label
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 40) || 'test'
  return `t_${clean}_${randomBytes(5).toString('hex')}`
}

/** Call at the top of a test file (or describe block). */
export function useTestSchema(label?: string): TestSchema {
  const schema = uniqueSchemaName(label)
  const connectionString = inject('pgUrl')
  const pools: pg.Pool[] = []
  const clients: pg.Client[] = []
  let pool: pg.Pool | undefined

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end().catch(() => {})))
    const admin = new pg.Client({ connectionString })
    await admin.connect()
    try {
      await admin.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`)
    } finally {
      await admin.end()
    }
    await Promise.all(pools.map((p) => p.end().catch(() => {})))
  })

  return {
    schema,
    connectionString,
    get pool() {
      if (!pool) {
        pool = new pg.Pool({ connectionString, max: 5 })
        pool.on('error', () => {}) // a server-side disconnect of an idle client must not crash the run
        pools.push(pool)
      }
      return pool
    },
    options: { connectionString, schema, enabled: true },
    async connect() {
      const client = new pg.Client({ connectionString })
      client.on('error', () => {})
      clients.push(client)
      await client.connect()
      return client
    },
  }
}

export interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
  reject(err: unknown): void
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (err: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/**
 * Polls until `predicate` returns a truthy value (which is returned). A last resort: prefer waiting
 * on an event or a deferred. Rejects with `what` and the last error/value after `timeout` ms: a hang bound, not a
 * timing assertion, so generous (as compat-tests/helpers.ts): 5 s was less than a group join and a first delivery take
 * on a 2-core machine running four workers beside other suites, and a passing wait returns as soon as it holds.
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  { timeout = 20_000, interval = 20, what }: { timeout?: number; interval?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeout
  let last: unknown
  for (;;) {
    try {
      const value = await predicate()
      if (value) return value as NonNullable<T>
      last = value
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) {
      const waited = what ? ` waiting for ${what}` : ''
      throw new Error(`waitFor timed out after ${timeout} ms${waited} (last: ${last instanceof Error ? last.message : String(last)})`)
    }
    await new Promise((r) => setTimeout(r, interval))
  }
}

/** Fails instead of hanging: `p`, or an error naming `what` once `ms` have passed with `p` still pending. */
export async function bounded<T>(what: string, p: Promise<T>, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms)))
  try {
    return await Promise.race([p, timeout])
  } finally {
    clearTimeout(timer)
  }
}
