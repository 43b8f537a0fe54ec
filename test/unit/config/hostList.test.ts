import { describe, expect, it } from 'vitest'
import { readConnectionString } from '../../../src/config/connection.js'
import { resolveConfig } from '../../../src/config/resolve.js'

const conn = (env: NodeJS.ProcessEnv, options = {}) => resolveConfig(options, env).connection

describe('libpq-style host lists', () => {
  it('keeps the first host in the URL and every host beside it, target_session_attrs taken out', () => {
    expect(conn({ DATABASE_URL: 'postgres://u:p@h1:5432,h2:5433,[::1]/db?target_session_attrs=read-write&sslmode=disable' })).toEqual({
      source: 'database-url',
      connectionString: 'postgres://u:p@h1:5432/db?sslmode=disable',
      hosts: [{ host: 'h1', port: 5432 }, { host: 'h2', port: 5433 }, { host: '::1' }],
      targetSessionAttrs: 'read-write',
    })
  })

  it('defaults the target to any, as libpq does', () => {
    expect(conn({}, { connectionString: 'postgres://h1,h2/db' })).toMatchObject({
      hosts: [{ host: 'h1' }, { host: 'h2' }],
      targetSessionAttrs: 'any',
    })
  })

  it('takes a single host with a target as a one-entry list (each connection is checked)', () => {
    expect(conn({ DATABASE_URL: 'postgres://h1/db?target_session_attrs=primary' })).toEqual({
      source: 'database-url',
      connectionString: 'postgres://h1/db',
      hosts: [{ host: 'h1' }],
      targetSessionAttrs: 'primary',
    })
  })

  it('leaves a single-host URL alone', () => {
    expect(readConnectionString('postgres://u@h:1/d?x=1', 'X')).toEqual({ connectionString: 'postgres://u@h:1/d?x=1' })
  })

  it('accepts the JDBC form through DATAHUB_PGQUEUE_DATASOURCE_URL, targetServerType mapped', () => {
    expect(readConnectionString('jdbc:postgresql://h1:5432,h2:5432/datahub?targetServerType=primary&prepareThreshold=0', 'X')).toEqual({
      connectionString: 'postgres://h1:5432/datahub',
      hosts: [
        { host: 'h1', port: 5432 },
        { host: 'h2', port: 5432 },
      ],
      targetSessionAttrs: 'read-write',
    })
    expect(
      conn({
        DATAHUB_PGQUEUE_DATASOURCE_URL: 'jdbc:postgresql://h1:5432,h2:5432/datahub?targetServerType=master',
        DATAHUB_PGQUEUE_DATASOURCE_USERNAME: 'dh',
        DATAHUB_PGQUEUE_DATASOURCE_PASSWORD: 'pw',
      }),
    ).toEqual({
      source: 'datasource-url',
      connectionString: 'postgres://dh:pw@h1:5432/datahub',
      hosts: [
        { host: 'h1', port: 5432 },
        { host: 'h2', port: 5432 },
      ],
      targetSessionAttrs: 'read-write',
      user: 'dh',
      password: 'pw',
    })
  })

  it('refuses read-only targets and bad entries, naming the setting, without the password', () => {
    expect(() => conn({ DATABASE_URL: 'postgres://u:secret@h1,h2/d?target_session_attrs=prefer-standby' })).toThrow(
      /DATABASE_URL.*target_session_attrs any, read-write or primary/,
    )
    expect(() => conn({ DATABASE_URL: 'postgres://u:secret@h1,h2:99999/d' })).toThrow(/DATABASE_URL.*65535/)
    expect(() => conn({ DATABASE_URL: 'postgres://u:secret@h1,h2:99999/d' })).not.toThrow(/secret/)
  })
})
