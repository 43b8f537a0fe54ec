import { createRequire } from 'node:module'
import { describe, expect, it, vi } from 'vitest'
import { KafkaJSError, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded } from '../../../src/kafkajs/errors.js'
import {
  DEFAULT_RETRY,
  TEST_RETRY,
  createRetrier,
  isRetriableHandlerError,
  nextRetryTime,
  randomFromRetryTime,
  retryDefaults,
} from '../../../src/kafkajs/retry.js'

// Runs scheduled retries immediately but records the requested waits.
function instantScheduler() {
  const waits: number[] = []
  return {
    waits,
    setTimeout: (fn: () => void, ms: number) => {
      waits.push(ms)
      queueMicrotask(fn)
    },
  }
}

describe('backoff arithmetic', () => {
  it('randomises within ±factor and rounds up', () => {
    expect(randomFromRetryTime(0.2, 300, () => 0)).toBe(240)
    expect(randomFromRetryTime(0.2, 300, () => 0.5)).toBe(300)
    expect(randomFromRetryTime(0.2, 300, () => 0.999999)).toBe(360)
    expect(randomFromRetryTime(0.2, 301, () => 0)).toBe(241) // 240.8 → 241
  })

  it('multiplies and caps at maxRetryTime', () => {
    const opts = { factor: 0.2, multiplier: 2, maxRetryTime: 1000 }
    expect(nextRetryTime(300, opts, () => 0.5)).toBe(600)
    expect(nextRetryTime(300, opts, () => 0)).toBe(480)
    expect(nextRetryTime(600, opts, () => 0.5)).toBe(1000)
  })

  it('has kafkajs defaults, and its NODE_ENV=test defaults', () => {
    expect(DEFAULT_RETRY).toEqual({ maxRetryTime: 30000, initialRetryTime: 300, factor: 0.2, multiplier: 2, retries: 5 })
    expect(retryDefaults({ NODE_ENV: 'production' })).toBe(DEFAULT_RETRY)
    expect(retryDefaults({ NODE_ENV: 'test' })).toBe(TEST_RETRY)
  })
})

describe('createRetrier', () => {
  const opts = { initialRetryTime: 100, factor: 0, multiplier: 2, maxRetryTime: 350, retries: 4 }

  it('retries retriable failures with growing capped waits, passing count and time', async () => {
    const sched = instantScheduler()
    const calls: Array<[number, number]> = []
    const retrier = createRetrier(opts, sched)
    const result = await retrier(async (_bail, count, time) => {
      calls.push([count, time])
      if (count < 3) throw new Error('transient')
      return 'ok'
    })
    expect(result).toBe('ok')
    expect(calls).toEqual([
      [0, 100],
      [1, 200],
      [2, 350],
      [3, 350],
    ])
    expect(sched.waits).toEqual([100, 200, 350])
  })

  it('gives up after `retries` retries with KafkaJSNumberOfRetriesExceeded', async () => {
    const sched = instantScheduler()
    const cause = new KafkaJSError('still down')
    const fn = vi.fn(async () => {
      throw cause
    })
    const error = await createRetrier(opts, sched)(fn).catch((e: unknown) => e)
    expect(fn).toHaveBeenCalledTimes(5)
    expect(error).toBeInstanceOf(KafkaJSNumberOfRetriesExceeded)
    expect(error).toMatchObject({ name: 'KafkaJSNumberOfRetriesExceeded', retryCount: 4, retryTime: 350, retriable: false, message: 'still down' })
    expect((error as Error).cause).toBe(cause)
  })

  it('stops at once on non-retriable errors, wrapping them', async () => {
    for (const thrown of [new KafkaJSNonRetriableError('fatal'), new TypeError('bug'), Object.assign(new Error('x'), { retriable: false })]) {
      const fn = vi.fn(async () => {
        throw thrown
      })
      const error = await createRetrier(opts, instantScheduler())(fn).catch((e: unknown) => e)
      expect(fn).toHaveBeenCalledTimes(1)
      expect(error).toBeInstanceOf(KafkaJSNonRetriableError)
      expect(error).not.toBeInstanceOf(KafkaJSNumberOfRetriesExceeded)
      expect((error as Error).message).toBe(thrown.message)
      expect((error as Error).cause).toBe(thrown)
    }
  })

  it('bail rejects with the given error unwrapped and stops retrying', async () => {
    const own = new Error('enough')
    const fn = vi.fn(async (bail: (e?: unknown) => void) => {
      bail(own)
      throw new Error('ignored')
    })
    await expect(createRetrier(opts, instantScheduler())(fn)).rejects.toBe(own)
    await new Promise((r) => setImmediate(r))
    expect(fn).toHaveBeenCalledTimes(1)
  })

  it('waits for real with the default scheduler', async () => {
    const started = Date.now()
    let n = 0
    await createRetrier({ initialRetryTime: 30, factor: 0, retries: 1 })(async () => {
      if (n++ === 0) throw new Error('once')
    })
    expect(Date.now() - started).toBeGreaterThanOrEqual(25)
  })
})

describe('isRetriableHandlerError', () => {
  it('follows the consumer rules', () => {
    expect(isRetriableHandlerError(new Error('x'))).toBe(true)
    expect(isRetriableHandlerError(new KafkaJSError('x'))).toBe(true)
    expect(isRetriableHandlerError('string thrown')).toBe(true)
    expect(isRetriableHandlerError(undefined)).toBe(true)
    expect(isRetriableHandlerError(new KafkaJSNonRetriableError('x'))).toBe(false)
    for (const E of [TypeError, RangeError, ReferenceError, SyntaxError]) expect(isRetriableHandlerError(new E('x'))).toBe(false)
    expect(isRetriableHandlerError({ name: 'Custom', retriable: false })).toBe(false)
  })
})

describe('matches kafkajs', () => {
  it('produces the same attempts, waits and final error as kafkajs/src/retry for the same random numbers', async () => {
    type KRetrier = (o: object) => (fn: (bail: unknown, c: number, t: number) => Promise<unknown>) => Promise<unknown>
    const kafkajsRetry = createRequire(__filename)('kafkajs/src/retry') as KRetrier
    const options = { initialRetryTime: 20, factor: 0.3, multiplier: 1.7, maxRetryTime: 90, retries: 4 }
    const run = async (make: (o: object) => (fn: (b: unknown, c: number, t: number) => Promise<unknown>) => Promise<unknown>) => {
      let seed = 7
      const random = vi.spyOn(Math, 'random').mockImplementation(() => (seed = (seed * 48271) % 2147483647) / 2147483647)
      const calls: Array<[number, number]> = []
      const error = (await make(options)(async (_b, count, time) => {
        calls.push([count, time])
        throw new Error('down')
      }).catch((e: unknown) => e)) as { name: string; retryCount: number; retryTime: number }
      random.mockRestore()
      return { calls, name: error.name, retryCount: error.retryCount, retryTime: error.retryTime }
    }
    const theirs = await run(kafkajsRetry)
    const ours = await run((o) => createRetrier(o))
    expect(theirs.calls).toHaveLength(5)
    expect(ours).toEqual(theirs)
  })
})
