// Login and group roles a test file created: cluster-wide, so they are dropped with everything they own or were
// granted, after their own sessions are ended, before useTestSchema drops the schema.
import type pg from 'pg'

export async function dropTestRoles(pool: pg.Pool, names: string[]): Promise<void> {
  const me = (await pool.query<{ u: string }>('SELECT current_user AS u')).rows[0]!.u
  for (const name of names) {
    // their own backends only (the logins of this file)
    await pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [name])
    await pool.query(`REASSIGN OWNED BY "${name}" TO "${me}"`).catch(() => undefined)
    await pool.query(`DROP OWNED BY "${name}"`).catch(() => undefined)
    await pool.query(`DROP ROLE IF EXISTS "${name}"`)
  }
}
