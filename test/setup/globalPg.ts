// Resolves ONE PostgreSQL for the integration project: DATABASE_URL, else the PG* variables, else an
// embedded server in <repo>/.pgdata/test (git-ignored via .pgdata/). Test files get it with inject('pgUrl').
import path from 'node:path'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { redactConnectionString } from '../../src/db/connection.js'
import { ensureEmbeddedPostgres } from '../../src/db/embedded.js'

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string
  }
}

const PG_VARS = ['PGHOST', 'PGPORT', 'PGUSER', 'PGDATABASE', 'PGPASSWORD', 'PGSERVICE'] as const

/** A URL equivalent to libpq's PG* variables (a socket directory goes into ?host=). */
export function urlFromPgEnv(env: NodeJS.ProcessEnv): string {
  const user = env.PGUSER ?? process.env.USER ?? 'postgres'
  const host = env.PGHOST ?? 'localhost'
  const port = env.PGPORT ?? '5432'
  const db = env.PGDATABASE ?? user
  const auth = `${encodeURIComponent(user)}${env.PGPASSWORD ? `:${encodeURIComponent(env.PGPASSWORD)}` : ''}@`
  if (host.startsWith('/')) return `postgres://${auth}/${encodeURIComponent(db)}?host=${encodeURIComponent(host)}&port=${port}`
  return `postgres://${auth}${host}:${port}/${encodeURIComponent(db)}`
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { url, stop } = await resolveTestPostgres(project.config.root, 'integration')
  project.provide('pgUrl', url)
  return stop
}

/** The PostgreSQL a test run uses, checked to answer; `stop` ends an embedded server this run started. */
export async function resolveTestPostgres(root: string, label: string): Promise<{ url: string; stop: () => Promise<void> }> {
  let url: string
  let source: string
  let stop = async () => {}
  if (process.env.DATABASE_URL) {
    url = process.env.DATABASE_URL
    source = 'DATABASE_URL'
  } else if (PG_VARS.some((v) => process.env[v])) {
    url = urlFromPgEnv(process.env)
    source = 'PG* variables'
  } else {
    const dataDir = path.join(root, '.pgdata', 'test')
    // shared: concurrent test runs use the same server; the last one to finish stops it
    const server = await ensureEmbeddedPostgres({ dataDir, shared: true, log: (m) => console.log(`[${label}] ${m}`) })
    url = server.connectionString
    source = server.reused ? 'embedded (reused)' : 'embedded'
    stop = () => server.stop()
  }
  // fail once, clearly, instead of in every test file
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 })
  try {
    await client.connect()
    await client.query('SELECT 1')
  } catch (err) {
    await stop()
    throw new Error(`${label} tests: cannot reach PostgreSQL ${redactConnectionString(url)} from ${source}: ${(err as Error).message}`, {
      cause: err,
    })
  } finally {
    await client.end().catch(() => {})
  }
  console.log(`[${label}] PostgreSQL ${redactConnectionString(url)} (${source})`)
  return { url, stop }
}
