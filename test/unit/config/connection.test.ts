import { describe, expect, it } from 'vitest'
import { readConnectionString } from '../../../src/config/connection.js'
import { resolveConfig } from '../../../src/config/resolve.js'
import { KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'

const DS = 'DATAHUB_PGQUEUE_DATASOURCE_URL'
const conn = (env: NodeJS.ProcessEnv, options = {}) => resolveConfig(options, env).connection

describe('connection precedence', () => {
  const all = {
    [DS]: 'postgres://ds-host/ds',
    DATABASE_URL: 'postgres://db-host/db',
    PGHOST: 'pg-host',
  }

  it('explicit option wins (shorthand or nested)', () => {
    expect(conn(all, { connectionString: 'postgres://opt/x' })).toEqual({ source: 'option', connectionString: 'postgres://opt/x' })
    expect(conn(all, { connection: { connectionString: 'postgresql://opt/y' } })).toEqual({
      source: 'option',
      connectionString: 'postgresql://opt/y',
    })
  })

  it('then DATAHUB_PGQUEUE_DATASOURCE_URL', () => {
    expect(conn(all)).toEqual({ source: 'datasource-url', connectionString: 'postgres://ds-host/ds' })
  })

  it('then DATABASE_URL', () => {
    expect(conn({ ...all, [DS]: undefined })).toEqual({ source: 'database-url', connectionString: 'postgres://db-host/db' })
  })

  it.each(['PGHOST', 'PGDATABASE', 'PGUSER', 'PGPORT', 'PGSERVICE'])('then %s alone means pg-env, without a URL', (name) => {
    expect(conn({ [name]: 'x' })).toEqual({ source: 'pg-env' })
  })

  it('else embedded', () => {
    expect(conn({})).toEqual({ source: 'embedded' })
    expect(conn({ PGPASSWORD: 'only-a-password' })).toEqual({ source: 'embedded' })
  })

  it('treats empty connection variables as unset', () => {
    expect(conn({ [DS]: '', DATABASE_URL: '  ', PGHOST: '' })).toEqual({ source: 'embedded' })
  })

  it('applies datasource username/password to the URL and the fields', () => {
    const c = conn({
      [DS]: 'jdbc:postgresql://h:5432/datahub?user=ignored',
      DATAHUB_PGQUEUE_DATASOURCE_USERNAME: 'data@hub',
      DATAHUB_PGQUEUE_DATASOURCE_PASSWORD: 'p:w/%d',
    })
    expect(c.source).toBe('datasource-url')
    expect(c.user).toBe('data@hub')
    expect(c.password).toBe('p:w/%d')
    const url = new URL(c.connectionString!)
    expect(decodeURIComponent(url.username)).toBe('data@hub')
    expect(decodeURIComponent(url.password)).toBe('p:w/%d')
    expect(url.searchParams.has('user')).toBe(false)
  })

  it('ignores datasource credentials when DATABASE_URL is used', () => {
    const c = conn({ DATABASE_URL: 'postgres://db/x', DATAHUB_PGQUEUE_DATASOURCE_USERNAME: 'u' })
    expect(c).toEqual({ source: 'database-url', connectionString: 'postgres://db/x' })
  })

  it('passes option user/password/ssl through, winning over the environment', () => {
    const ssl = { rejectUnauthorized: false }
    const c = conn(
      { [DS]: 'postgres://h/d', DATAHUB_PGQUEUE_DATASOURCE_USERNAME: 'envuser' },
      { connection: { user: 'optuser', password: 'secret', ssl } },
    )
    expect(c).toMatchObject({ source: 'datasource-url', user: 'optuser', password: 'secret', ssl })
    expect(c.connectionString).toBe('postgres://optuser:secret@h/d')
    expect(conn({ PGHOST: 'x' }, { connection: { user: 'u', ssl: true } })).toEqual({ source: 'pg-env', user: 'u', ssl: true })
  })

  it('rejects two different explicit connection strings', () => {
    expect(() => conn({}, { connectionString: 'postgres://a/x', connection: { connectionString: 'postgres://b/x' } })).toThrow(
      KafkaJSNonRetriableError,
    )
  })
})

describe('readConnectionString', () => {
  it('converts jdbc URLs, keeping only parameters pg understands', () => {
    expect(
      readConnectionString(
        'jdbc:postgresql://localhost:5432/datahub?sslmode=require&prepareThreshold=0&reWriteBatchedInserts=true&ApplicationName=gms',
        DS,
      ).connectionString,
    ).toBe('postgres://localhost:5432/datahub?sslmode=require&application_name=gms')
    expect(readConnectionString('jdbc:postgresql://db.example.com/datahub', DS).connectionString).toBe('postgres://db.example.com/datahub')
    expect(readConnectionString('JDBC:POSTGRESQL://[::1]:5433/d?ssl=true', DS).connectionString).toBe('postgres://[::1]:5433/d?ssl=true')
    expect(readConnectionString('jdbc:postgresql:datahub', DS).connectionString).toBe('postgres://localhost/datahub')
  })

  it('passes postgres URLs through untouched', () => {
    const url = 'postgresql://u:p@h:1/d?sslmode=verify-full&anything=kept'
    expect(readConnectionString(url, 'DATABASE_URL').connectionString).toBe(url)
  })

  it.each([
    [DS, 'mysql://h/d'],
    [DS, 'jdbc:mysql://h/d'],
    [DS, 'jdbc:postgresql://h1:5432,h2:5432/d?targetServerType=secondary'],
    [DS, 'postgres://h1,h2/d?target_session_attrs=standby'],
    [DS, 'postgres://h1,:5/d'],
    [DS, 'localhost:5432/datahub'],
    ['DATABASE_URL', 'http://h/d'],
  ])('rejects %s=%s naming the variable and value', (name, value) => {
    let caught: unknown
    try {
      resolveConfig({}, { [name]: value })
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(KafkaJSNonRetriableError)
    expect((caught as Error).message).toContain(name)
    expect((caught as Error).message).toContain(JSON.stringify(value))
  })

  it('rejects a bad option connection string naming the option', () => {
    expect(() => resolveConfig({ connectionString: 'mongodb://x' }, {})).toThrow(/options\.connectionString.*"mongodb:\/\/x"/)
  })
})

describe('libpq host lists in the PG* environment', () => {
  it('PGHOST=h1,h2 with one PGPORT for all, or one per host, and PGTARGETSESSIONATTRS', () => {
    expect(conn({ PGHOST: 'h1,h2', PGPORT: '5433' })).toEqual({
      source: 'pg-env',
      hosts: [
        { host: 'h1', port: 5433 },
        { host: 'h2', port: 5433 },
      ],
      targetSessionAttrs: 'any',
    })
    expect(conn({ PGHOST: 'h1, h2', PGPORT: '5433,5434', PGTARGETSESSIONATTRS: 'read-write' })).toEqual({
      source: 'pg-env',
      hosts: [
        { host: 'h1', port: 5433 },
        { host: 'h2', port: 5434 },
      ],
      targetSessionAttrs: 'read-write',
    })
    // one host and a target: still probed (a primary is asked for)
    expect(conn({ PGHOST: 'h1', PGTARGETSESSIONATTRS: 'primary' })).toEqual({
      source: 'pg-env',
      hosts: [{ host: 'h1' }],
      targetSessionAttrs: 'primary',
    })
    // one host, no target: pg reads PG* itself
    expect(conn({ PGHOST: 'h1', PGPORT: '5433' })).toEqual({ source: 'pg-env' })
  })

  it('refuses port lists of another length and targets a queue writer cannot use', () => {
    expect(() => conn({ PGHOST: 'h1,h2,h3', PGPORT: '1,2' })).toThrow(KafkaJSNonRetriableError)
    expect(() => conn({ PGHOST: 'h1,h2,h3', PGPORT: '1,2' })).toThrow(/PGPORT.*one per PGHOST entry \(3\)/)
    expect(() => conn({ PGHOST: 'h1,h2', PGTARGETSESSIONATTRS: 'standby' })).toThrow(/PGTARGETSESSIONATTRS/)
    expect(() => conn({ PGHOST: 'h1,h2', PGPORT: '99999' })).toThrow(/ports between 1 and 65535/)
  })
})
