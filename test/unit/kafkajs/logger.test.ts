import type { LogEntry } from 'kafkajs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createLogger, defaultLogCreator, logLevel, redact, redactString } from '../../../src/kafkajs/logger.js'

function capture(level = logLevel.INFO) {
  const entries: LogEntry[] = []
  const created: number[] = []
  const logger = createLogger({
    level,
    logCreator: (l) => {
      created.push(l)
      return (e) => entries.push(e)
    },
  })
  return { logger, entries, created }
}

afterEach(() => {
  vi.unstubAllEnvs()
  vi.restoreAllMocks()
})

describe('createLogger', () => {
  it('uses the same numeric levels as kafkajs', () => {
    expect({ ...logLevel }).toMatchObject({ NOTHING: 0, ERROR: 1, WARN: 2, INFO: 4, DEBUG: 5 })
  })

  it('filters by level and builds KafkaJS-shaped entries', () => {
    const { logger, entries, created } = capture(logLevel.WARN)
    expect(created).toEqual([logLevel.WARN])
    logger.info('hidden')
    logger.debug('hidden')
    logger.warn('careful', { topic: 't' })
    logger.error('bad')
    expect(entries.map((e) => e.label)).toEqual(['WARN', 'ERROR'])
    const [warn] = entries
    expect(warn).toMatchObject({ namespace: undefined, level: logLevel.WARN, label: 'WARN' })
    expect(warn!.log).toMatchObject({ message: 'careful', topic: 't', logger: 'kafkajs' })
    expect(new Date(warn!.log.timestamp).toISOString()).toBe(warn!.log.timestamp)
  })

  it('namespaces share the root level unless given their own; setLogLevel changes the root', () => {
    const { logger, entries } = capture(logLevel.INFO)
    const consumer = logger.namespace('Consumer')
    const chatty = logger.namespace('Chatty', logLevel.DEBUG)
    consumer.debug('no')
    chatty.debug('yes')
    consumer.setLogLevel(logLevel.DEBUG)
    logger.debug('root now debug')
    consumer.debug('consumer too')
    expect(entries.map((e) => [e.namespace, e.log.message])).toEqual([
      ['Chatty', 'yes'],
      [undefined, 'root now debug'],
      ['Consumer', 'consumer too'],
    ])
  })

  it('KAFKAJS_LOG_LEVEL overrides the configured level, by name in any case', () => {
    vi.stubEnv('KAFKAJS_LOG_LEVEL', 'debug')
    const { logger, entries, created } = capture(logLevel.ERROR)
    expect(created).toEqual([logLevel.DEBUG])
    logger.namespace('X', logLevel.NOTHING).debug('shown')
    expect(entries).toHaveLength(1)
  })

  it('ignores an unknown KAFKAJS_LOG_LEVEL', () => {
    vi.stubEnv('KAFKAJS_LOG_LEVEL', 'loud')
    const { logger, entries } = capture(logLevel.ERROR)
    logger.warn('hidden')
    expect(entries).toHaveLength(0)
  })

  it('redacts secrets in extra before the logCreator sees them', () => {
    const { logger, entries } = capture()
    logger.info('connecting', {
      password: 'hunter2',
      pool: { connectionString: 'postgres://u:hunter2@h/db', host: 'h' },
      url: 'postgres://u:hunter2@h:5432/db',
    })
    const text = JSON.stringify(entries)
    expect(text).not.toContain('hunter2')
    expect(entries[0]!.log).toMatchObject({
      password: '[redacted]',
      pool: { connectionString: '[redacted]', host: 'h' },
      url: 'postgres://u:[redacted]@h:5432/db',
    })
  })

  it('default logCreator prints kafkajs-style JSON lines to the matching console method', () => {
    const info = vi.spyOn(console, 'info').mockImplementation(() => {})
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    const logger = createLogger({ level: logLevel.INFO, logCreator: defaultLogCreator })
    logger.namespace('Producer').info('hello', { a: 1 })
    logger.error('oops')
    expect(JSON.parse(info.mock.calls[0]![0] as string)).toMatchObject({
      level: 'INFO',
      logger: 'kafkajs',
      message: '[Producer] hello',
      a: 1,
    })
    expect(JSON.parse(error.mock.calls[0]![0] as string)).toMatchObject({ level: 'ERROR', message: 'oops' })
  })
})

describe('redact', () => {
  it('handles nesting, arrays, cycles and leaves the input untouched', () => {
    const input: Record<string, unknown> = { list: [{ Password: 'p' }], n: 1, buf: Buffer.from('x') }
    input.self = input
    const out = redact(input)
    expect(out.list).toEqual([{ Password: '[redacted]' }])
    expect(out.self).toBe(out)
    expect(out.buf).toBe(input.buf)
    expect((input.list as Array<Record<string, unknown>>)[0]!.Password).toBe('p')
  })

  it('scrubs URL passwords only', () => {
    expect(redactString('see postgresql://alice:s3cr%40t@db:5432/x and http://example.com')).toBe(
      'see postgresql://alice:[redacted]@db:5432/x and http://example.com',
    )
  })
})
