import { describe, expect, it } from 'vitest'
import { isRetriableCrash } from '../../../src/consumer/crashCause.js'
import { toKafkaJSError } from '../../../src/db/pgErrors.js'
import { KafkaJSConnectionError, KafkaJSError, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded } from '../../../src/kafkajs/errors.js'

const withCause = <E extends Error>(e: E, cause: unknown): E => Object.assign(e, { cause })
const driverError = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {})

describe('isRetriableCrash', () => {
  it('a connection error wrapping the driver error is retriable (the driver error knows nothing of retries)', () => {
    const e = toKafkaJSError(driverError('read ECONNRESET', 'ECONNRESET'), 'restart')
    expect(e).toBeInstanceOf(KafkaJSConnectionError)
    expect(isRetriableCrash(e)).toBe(true)
    expect(isRetriableCrash(toKafkaJSError(driverError('Connection terminated unexpectedly'), 'restart'))).toBe(true)
  })

  it('a run out of retries is retriable whatever its cause', () => {
    expect(isRetriableCrash(new KafkaJSNumberOfRetriesExceeded(new KafkaJSNonRetriableError('x'), { retryCount: 3, retryTime: 10 }))).toBe(true)
  })

  it('the original cause decides, as in KafkaJS: a retriable wrapper of a non-retriable error is not', () => {
    expect(isRetriableCrash(withCause(new KafkaJSError('outer', { retriable: true }), new KafkaJSNonRetriableError('inner')))).toBe(false)
    expect(isRetriableCrash(withCause(new KafkaJSNonRetriableError('outer'), new KafkaJSError('inner', { retriable: true })))).toBe(true)
  })

  it('a handler error (not retriable) wrapped for the crash is not', () => {
    expect(isRetriableCrash(withCause(new KafkaJSNonRetriableError('handler'), new TypeError('boom')))).toBe(false)
    expect(isRetriableCrash(new Error('plain'))).toBe(false)
  })
})
