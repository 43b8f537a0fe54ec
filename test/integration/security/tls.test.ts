// TLS: the `ssl` option reaches node-postgres untouched (checked on the pool config resolvePoolConfig builds and on
// pg's own parameter resolution), and on a server of the test's own with TLS on, connections really are encrypted,
// verified against the given CA, and refused with a clear error against the wrong one.
import { execFileSync } from 'node:child_process'
import { chownSync, existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
// pg's own parameter resolution (an untyped internal module)
// @ts-expect-error no declaration file
import ConnectionParameters from 'pg/lib/connection-parameters.js'
import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../../src/config/resolve.js'
import { resolvePoolConfig } from '../../../src/db/connection.js'
import { clusterDirOf } from '../../../src/db/embedded/postmaster.js'
import { Kafka } from '../../../src/kafka.js'
import { KafkaJSError } from '../../../src/kafkajs/errors.js'
import { logLevel } from '../../../src/kafkajs/exports.js'
import { startOwnServer, uniqueAppName, withAppName } from '../../faults/support.js'

const CA = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n'

describe('ssl options reach the pool config', () => {
  it('an ssl object from the options arrives as is, and beats sslmode in the URL', async () => {
    const ssl = { rejectUnauthorized: true, ca: CA, servername: 'db.internal', minVersion: 'TLSv1.3' as const }
    const config = resolveConfig({ connectionString: 'postgres://app:pw@db.internal:5432/queue?sslmode=disable', connection: { ssl } }, {})
    const { poolConfig } = await resolvePoolConfig(config)
    expect(poolConfig.ssl).toEqual(ssl)
    expect(poolConfig.connectionString).not.toMatch(/sslmode/)
    const params = new ConnectionParameters(poolConfig)
    expect(params.ssl).toEqual(ssl)
    expect(params.host).toBe('db.internal')
  })

  // resolveConfig deep-freezes the config, ssl object included; pg's ConnectionParameters then hides `key` with
  // Object.defineProperty on that same object and throws "Cannot redefine property: key": no client certificate
  // (mutual TLS) can ever be used.
  it('an ssl object with a client key and certificate (mutual TLS) reaches pg usable', async () => {
    const ssl = { rejectUnauthorized: true, ca: CA, cert: Buffer.from('cert'), key: Buffer.from('key') }
    const { poolConfig } = await resolvePoolConfig(resolveConfig({ connectionString: 'postgres://app@db.internal/queue', connection: { ssl } }, {}))
    expect(poolConfig.ssl).toEqual(ssl)
    const params = new ConnectionParameters(poolConfig)
    expect(params.ssl.key).toEqual(ssl.key)
  })

  it.each([true, false])('ssl: %s arrives as is', async (ssl) => {
    const { poolConfig } = await resolvePoolConfig(resolveConfig({ connectionString: 'postgres://h/d', connection: { ssl } }, {}))
    expect(poolConfig.ssl).toBe(ssl)
    expect(new ConnectionParameters(poolConfig).ssl).toBe(ssl)
  })

  it('with the PG* environment and with DATAHUB_PGQUEUE_DATASOURCE_URL too', async () => {
    const ssl = { rejectUnauthorized: false }
    const fromPgEnv = await resolvePoolConfig(resolveConfig({ connection: { ssl } }, { PGHOST: 'db.internal' }))
    expect(fromPgEnv.poolConfig.ssl).toEqual(ssl)
    const fromDatasource = await resolvePoolConfig(
      resolveConfig({ connection: { ssl } }, { DATAHUB_PGQUEUE_DATASOURCE_URL: 'jdbc:postgresql://db.internal:5432/queue?sslmode=require' }),
    )
    expect(fromDatasource.poolConfig.ssl).toEqual(ssl)
    // without an ssl option, the URL's sslmode is what pg sees
    const urlOnly = await resolvePoolConfig(resolveConfig({}, { DATAHUB_PGQUEUE_DATASOURCE_URL: 'postgres://db.internal/queue?sslmode=no-verify' }))
    expect(urlOnly.poolConfig.ssl).toBeUndefined()
    expect(new ConnectionParameters(urlOnly.poolConfig).ssl).toEqual({ rejectUnauthorized: false })
  })

  it('a non-object, non-boolean ssl option is refused at startup', () => {
    expect(() => resolveConfig({ connection: { ssl: 'require' as unknown as boolean } }, {})).toThrow(/options\.connection\.ssl/)
  })
})

const haveOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
})()

describe.runIf(haveOpenssl)('TLS on a real server', () => {
  let server: Awaited<ReturnType<typeof startOwnServer>>
  it('connections are encrypted, verified against the CA, and refused with the wrong CA', async () => {
    server = await startOwnServer('tls')
    const cluster = clusterDirOf(server.dataDir)
    const cert = path.join(cluster, 'server.crt')
    const key = path.join(cluster, 'server.key')
    const certFor = (out: string, keyOut: string) =>
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=localhost',
          '-addext',
          'subjectAltName=IP:127.0.0.1,DNS:localhost',
          '-keyout',
          keyOut,
          '-out',
          out,
        ],
        { stdio: 'ignore' },
      )
    certFor(cert, key)
    certFor(path.join(server.dataDir, 'other.crt'), path.join(server.dataDir, 'other.key'))
    if (process.getuid?.() === 0) {
      // the embedded server runs as the postgres user, which must own its key
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
      chownSync(cert, uid, gid)
      chownSync(key, uid, gid)
    }
    const admin = new pg.Client({ connectionString: server.url })
    await admin.connect()
    await admin.query('ALTER SYSTEM SET ssl = on')
    await admin.query('SELECT pg_reload_conf()')
    expect(existsSync(cert)).toBe(true)

    const app = uniqueAppName('tls')
    const kafka = new Kafka({
      logLevel: logLevel.NOTHING,
      pgqueue: {
        connectionString: withAppName(server.url, app),
        schema: 'tls_test',
        enabled: true,
        connection: { ssl: { ca: readFileSync(cert), rejectUnauthorized: true } },
      },
    })
    const producer = kafka.producer()
    await producer.connect()
    await producer.send({ topic: 'tls', messages: [{ value: 'over tls' }] })
    const { rows } = await admin.query<{ ssl: boolean; version: string }>(
      'SELECT s.ssl, s.version FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = $1',
      [app],
    )
    await producer.disconnect()
    console.log(`TLS: ${rows.length} library connections, ${JSON.stringify(rows)}`)
    expect(rows.length).toBeGreaterThan(0)
    expect(rows.every((r) => r.ssl)).toBe(true)

    const wrongCa = new Kafka({
      logLevel: logLevel.NOTHING,
      pgqueue: {
        connectionString: server.url,
        schema: 'tls_test',
        enabled: false,
        connection: { ssl: { ca: readFileSync(path.join(server.dataDir, 'other.crt')), rejectUnauthorized: true } },
      },
    })
    const err = await wrongCa
      .producer()
      .connect()
      .then(
        () => undefined,
        (e: Error) => e,
      )
    expect(err).toBeInstanceOf(KafkaJSError)
    expect(err!.message).toMatch(/certificate|self[- ]signed/i)
    await admin.end()
  }, 60_000)

  it('a client offering its own certificate and key (mutual TLS) connects', async () => {
    expect(server, 'the server of the previous test').toBeDefined()
    const cert = path.join(clusterDirOf(server.dataDir), 'server.crt')
    const kafka = new Kafka({
      logLevel: logLevel.NOTHING,
      pgqueue: {
        connectionString: server.url,
        schema: 'tls_test',
        enabled: false,
        connection: {
          ssl: {
            ca: readFileSync(cert),
            rejectUnauthorized: true,
            cert: readFileSync(path.join(server.dataDir, 'other.crt')),
            key: readFileSync(path.join(server.dataDir, 'other.key')),
          },
        },
      },
    })
    const producer = kafka.producer()
    const err = await producer.connect().then(
      () => undefined,
      (e: Error) => e,
    )
    await producer.disconnect()
    expect(err?.message, err?.message).toBeUndefined()
  }, 30_000)
})
