import { describe, expect, it } from 'vitest'
// pg's own parameter resolution, to prove the overrides survive it (an untyped internal module)
// @ts-expect-error no declaration file
import ConnectionParameters from 'pg/lib/connection-parameters.js'
import type { ConnectionConfig, PgQueueConfig } from '../../../src/config/types.js'
import { APPLICATION_NAME, redactConnectionString, resolvePoolConfig } from '../../../src/db/connection.js'

function configWith(connection: ConnectionConfig, statementTimeoutMillis = 0): PgQueueConfig {
  return {
    connection,
    pool: {
      min: 1,
      max: 8,
      idleTimeoutMillis: 120_000,
      maxLifetimeSeconds: 7200,
      connectionTimeoutMillis: 1000,
      leakTimeMinutes: 15,
      statementTimeoutMillis,
    },
    embedded: { dataDir: '/nonexistent', port: 0 },
  } as PgQueueConfig
}

describe('redactConnectionString', () => {
  it.each([
    ['postgres://alice:s3cret@db.example:6543/app?sslmode=require', 'postgres://alice@db.example:6543/app'],
    ['postgresql://alice:p%40ss%3Aw@db/app', 'postgres://alice@db/app'],
    ['jdbc:postgresql://db:5432/app?user=bob&password=hunter2', 'postgres://bob@db:5432/app'],
    ['postgres://db/app', 'postgres://db/app'],
    ['postgres:///app?host=/var/run/postgresql&password=x', 'postgres:///var/run/postgresql/app'],
    ['host=db password=hunter2 dbname=app', '<unparseable connection string>'],
    ['mysql://u:p@h/db', '<unparseable connection string>'],
  ])('%s -> %s', (input, expected) => {
    const out = redactConnectionString(input)
    expect(out).toBe(expected)
    expect(out).not.toMatch(/s3cret|hunter2|p%40ss|ss:w/)
  })
})

describe('resolvePoolConfig', () => {
  it('maps the pool settings and names the application', async () => {
    const { poolConfig, embedded } = await resolvePoolConfig(
      configWith({ source: 'database-url', connectionString: 'postgres://u:pw@h:5432/d' }, 2500),
    )
    expect(embedded).toBeUndefined()
    expect(poolConfig).toMatchObject({
      connectionString: 'postgres://u:pw@h:5432/d',
      max: 8,
      min: 1,
      idleTimeoutMillis: 120_000,
      connectionTimeoutMillis: 1000,
      maxLifetimeSeconds: 7200,
      application_name: APPLICATION_NAME,
      statement_timeout: 2500,
    })
  })

  it('leaves statement_timeout unset when 0', async () => {
    const { poolConfig } = await resolvePoolConfig(configWith({ source: 'option', connectionString: 'postgres://h/d' }))
    expect(poolConfig).not.toHaveProperty('statement_timeout')
  })

  it('applies user/password/ssl overrides so that pg actually uses them', async () => {
    const { poolConfig } = await resolvePoolConfig(
      configWith({
        source: 'datasource-url',
        connectionString: 'postgres://urluser:urlpw@h:5432/d?sslmode=require',
        user: 'svc@corp',
        password: 'p@ss:w/rd%',
        ssl: false,
      }),
    )
    const params = new ConnectionParameters(poolConfig)
    expect(params.user).toBe('svc@corp')
    expect(params.password).toBe('p@ss:w/rd%')
    expect(params.ssl).toBe(false)
    expect(params.host).toBe('h')
    expect(params.database).toBe('d')
  })

  it('pg-env leaves host, database and credentials to pg', async () => {
    const { poolConfig } = await resolvePoolConfig(configWith({ source: 'pg-env' }))
    expect(poolConfig.connectionString).toBeUndefined()
    expect(poolConfig.host).toBeUndefined()
    expect(poolConfig.password).toBeUndefined()
    expect(poolConfig.application_name).toBe(APPLICATION_NAME)
  })

  it('never logs the password', async () => {
    const lines: string[] = []
    await resolvePoolConfig(
      configWith({ source: 'database-url', connectionString: 'postgres://u:topsecret@h:5432/d', password: 'other-secret' }),
      (m) => lines.push(m),
    )
    expect(lines.join('\n')).toContain('h:5432/d')
    expect(lines.join('\n')).not.toMatch(/topsecret|other-secret/)
  })
})
