import { describe, expect, it } from 'vitest'
import { KafkaJSConnectionError, KafkaJSError, KafkaJSNonRetriableError, KafkaJSRequestTimeoutError } from '../../../src/kafkajs/errors.js'
import { classifyPgError, sqlState, toKafkaJSError } from '../../../src/db/pgErrors.js'

const retriable = (err: unknown) => classifyPgError(err) !== 'fatal'

const pgError = (code: string, message = 'boom') => Object.assign(new Error(message), { code, severity: 'ERROR' })
const nodeError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code })

describe('classifyPgError', () => {
  it.each([
    ['08006', 'connection'],
    ['08001', 'connection'],
    ['08P01', 'connection'],
    ['57P01', 'connection'],
    ['57P02', 'connection'],
    ['57P03', 'connection'],
    ['53300', 'connection'],
    ['40001', 'transient'],
    ['40P01', 'transient'],
    ['55P03', 'transient'],
    ['23505', 'fatal'],
    ['42601', 'fatal'],
    ['42P01', 'fatal'],
    ['22P02', 'fatal'],
  ])('SQLSTATE %s is %s', (code, kind) => {
    expect(classifyPgError(pgError(code))).toBe(kind)
  })

  it.each(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'])('node error %s is a connection error', (code) => {
    expect(classifyPgError(nodeError(code))).toBe('connection')
    expect(retriable(nodeError(code))).toBe(true)
  })

  it('recognises node-postgres messages that carry no code', () => {
    expect(retriable(new Error('Connection terminated unexpectedly'))).toBe(true)
    expect(retriable(new Error('timeout exceeded when trying to connect'))).toBe(true)
    expect(retriable(new Error('relation "x" does not exist'))).toBe(false)
  })

  it('looks inside AggregateError (dual-stack connect)', () => {
    const agg = new AggregateError([nodeError('ECONNREFUSED'), nodeError('ECONNREFUSED')], 'connect failed')
    expect(classifyPgError(agg)).toBe('connection')
    expect(classifyPgError(new AggregateError([new Error('x')], 'y'))).toBe('fatal')
  })

  it('treats non-errors as fatal and respects KafkaJS errors', () => {
    expect(retriable(undefined)).toBe(false)
    expect(retriable('ECONNREFUSED')).toBe(false)
    expect(retriable(new KafkaJSNonRetriableError('no'))).toBe(false)
    expect(retriable(new KafkaJSError('yes'))).toBe(true)
  })

  it('reads SQLSTATE only from five-character codes', () => {
    expect(sqlState(pgError('40001'))).toBe('40001')
    expect(sqlState(nodeError('ECONNRESET'))).toBeUndefined()
    expect(sqlState(nodeError('EPIPE'))).toBeUndefined()
  })
})

describe('toKafkaJSError', () => {
  it('wraps connection failures as retriable KafkaJSConnectionError with cause', () => {
    const cause = nodeError('ECONNREFUSED')
    const err = toKafkaJSError(cause, 'connect')
    expect(err).toBeInstanceOf(KafkaJSConnectionError)
    expect(err.retriable).toBe(true)
    expect(err.cause).toBe(cause)
    expect(err.message).toMatch(/^connect: connect ECONNREFUSED/)
  })

  it('wraps serialization failures as retriable KafkaJSError', () => {
    const cause = pgError('40001', 'could not serialize access')
    const err = toKafkaJSError(cause)
    expect(err).toBeInstanceOf(KafkaJSError)
    expect(err).not.toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err).not.toBeInstanceOf(KafkaJSConnectionError)
    expect(err.retriable).toBe(true)
    expect(err.message).toContain('SQLSTATE 40001')
    expect(err.cause).toBe(cause)
  })

  it('wraps a statement ended by statement_timeout (KafkaJS requestTimeout) as retriable KafkaJSRequestTimeoutError', () => {
    const err = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })
    const wrapped = toKafkaJSError(err, 'send')
    expect(wrapped).toBeInstanceOf(KafkaJSRequestTimeoutError)
    expect(wrapped.name).toBe('KafkaJSRequestTimeoutError')
    expect(wrapped.retriable).toBe(true)
    // a cancel for another reason (pg_cancel_backend) stays a plain retriable KafkaJSError
    const cancelled = toKafkaJSError(Object.assign(new Error('canceling statement due to user request'), { code: '57014' }))
    expect(cancelled).not.toBeInstanceOf(KafkaJSRequestTimeoutError)
    expect(cancelled.retriable).toBe(true)
  })

  it('wraps everything else as KafkaJSNonRetriableError', () => {
    const cause = pgError('42601', 'syntax error')
    const err = toKafkaJSError(cause, 'migration V001__x.sql')
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.retriable).toBe(false)
    expect(err.cause).toBe(cause)
    expect(err.message).toBe('migration V001__x.sql: syntax error (SQLSTATE 42601)')
  })

  it('passes KafkaJS errors through unchanged', () => {
    const original = new KafkaJSNonRetriableError('already wrapped')
    expect(toKafkaJSError(original, 'ctx')).toBe(original)
  })

  it('accepts non-Error values', () => {
    const err = toKafkaJSError('plain string')
    expect(err).toBeInstanceOf(KafkaJSNonRetriableError)
    expect(err.message).toBe('plain string')
  })
})
