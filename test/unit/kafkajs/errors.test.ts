import kafkajs from 'kafkajs'
import { describe, expect, it } from 'vitest'
import * as errors from '../../../src/kafkajs/errors.js'

describe('errors', () => {
  it('re-exports the very classes kafkajs exports, including the runtime-only ones', () => {
    const runtime = kafkajs as unknown as Record<string, unknown>
    const errorNames = Object.keys(runtime).filter((k) => k.startsWith('KafkaJS'))
    expect(errorNames.length).toBeGreaterThan(30)
    for (const name of errorNames) {
      expect((errors as Record<string, unknown>)[name], name).toBe(runtime[name])
    }
  })

  it('runtime-only classes construct as declared', () => {
    const member = new errors.KafkaJSMemberIdRequired('need id', { memberId: 'm-1' })
    expect(member).toBeInstanceOf(errors.KafkaJSProtocolError)
    expect(member.memberId).toBe('m-1')
    expect(member.name).toBe('KafkaJSMemberIdRequired')

    const closed = new errors.KafkaJSConnectionClosedError('closed', { host: 'h', port: 9 })
    expect(closed.broker).toBe('h:9')
    expect(closed.host).toBe('h')
    expect(closed).toBeInstanceOf(errors.KafkaJSConnectionError)

    const inv = new errors.KafkaJSInvariantViolation('x broke')
    expect(inv.message).toBe('Invariant violated: x broke. This is likely a bug and should be reported.')
    expect(inv.retriable).toBe(false)

    const created = new errors.KafkaJSCreateTopicError({ message: 'exists', type: 'TOPIC_ALREADY_EXISTS', code: 36 }, 't1')
    expect(created.topic).toBe('t1')
    expect(created.type).toBe('TOPIC_ALREADY_EXISTS')
    expect(created.name).toBe('KafkaJSCreateTopicError')

    expect(new errors.KafkaJSNoBrokerAvailableError().message).toBe('No broker available')
    expect(new errors.KafkaJSFetcherRebalanceError('r')).toBeInstanceOf(Error)
    // not KafkaJSErrors, as in kafkajs
    expect(new errors.KafkaJSFetcherRebalanceError('r')).not.toBeInstanceOf(errors.KafkaJSError)
    expect(new errors.KafkaJSInvalidLongError('l')).toBeInstanceOf(errors.KafkaJSError)
  })
})
