// KafkaJS's retrier: randomised exponential backoff, bail(), and the same error wrapping, so
// consumer crash/restart decisions and error names match kafkajs exactly.
import type { RetryOptions } from 'kafkajs'
import { KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded } from './errors.js'

export type BackoffOptions = Required<Omit<RetryOptions, 'restartOnFailure'>>

export const DEFAULT_RETRY: Readonly<BackoffOptions> = Object.freeze({
  maxRetryTime: 30_000,
  initialRetryTime: 300,
  factor: 0.2,
  multiplier: 2,
  retries: 5,
})

/** kafkajs silently switches to these when NODE_ENV=test; apps' test suites rely on the short waits. */
export const TEST_RETRY: Readonly<BackoffOptions> = Object.freeze({
  maxRetryTime: 1000,
  initialRetryTime: 50,
  factor: 0.02,
  multiplier: 1.5,
  retries: 15,
})

export function retryDefaults(env: NodeJS.ProcessEnv = process.env): Readonly<BackoffOptions> {
  return env.NODE_ENV === 'test' ? TEST_RETRY : DEFAULT_RETRY
}

export type Bail = (error?: unknown) => void
export type RetryFn<T> = (bail: Bail, retryCount: number, retryTime: number) => Promise<T>
export type Retrier = <T>(fn: RetryFn<T>) => Promise<T>

export interface RetrierDeps {
  random?: () => number
  setTimeout?: (fn: () => void, ms: number) => unknown
}

/** A uniformly random whole number of ms in retryTime ± factor·retryTime (rounded up). */
export function randomFromRetryTime(factor: number, retryTime: number, random: () => number = Math.random): number {
  const delta = factor * retryTime
  const min = retryTime - delta
  return Math.ceil(random() * (retryTime + delta - min) + min)
}

/** The wait after `retryTime`: randomised, multiplied, capped at maxRetryTime. */
export function nextRetryTime(
  retryTime: number,
  { factor, multiplier, maxRetryTime }: Pick<BackoffOptions, 'factor' | 'multiplier' | 'maxRetryTime'>,
  random: () => number = Math.random,
): number {
  return Math.min(randomFromRetryTime(factor, retryTime, random) * multiplier, maxRetryTime)
}

// Programming errors: retrying the same input cannot help.
const UNRECOVERABLE = new Set(['RangeError', 'ReferenceError', 'SyntaxError', 'TypeError'])

/**
 * The consumer rule: plain errors are retriable; `retriable === false` and the four programming-error
 * classes (by name, as kafkajs checks) are not. Non-objects thrown count as retriable.
 */
export function isRetriableHandlerError(e: unknown): boolean {
  if (e === null || typeof e !== 'object') return true
  const { retriable, name } = e as { retriable?: unknown; name?: unknown }
  return retriable !== false && !(typeof name === 'string' && UNRECOVERABLE.has(name))
}

// KafkaJSError reads `.message` off objects; give it something sensible for thrown non-errors.
const asErrorLike = (e: unknown): Error | string => (e instanceof Error ? e : typeof e === 'string' ? e : new Error(String(e)))

// The runtime constructor takes { cause }; the .d.ts omits it.
const NonRetriableWithCause = KafkaJSNonRetriableError as unknown as new (
  e: Error | string,
  metadata: { cause: Error },
) => InstanceType<typeof KafkaJSNonRetriableError>

const causeOf = (e: unknown): Error => {
  const cause = e !== null && typeof e === 'object' ? (e as { cause?: unknown }).cause : undefined
  const chosen = cause ?? e
  return chosen instanceof Error ? chosen : new Error(String(chosen))
}

/**
 * `retrier(fn)` runs fn(bail, retryCount, retryTime) until it resolves. Retriable failures wait
 * `retryTime` and try again with the next backoff; after `retries` retries the promise rejects with
 * KafkaJSNumberOfRetriesExceeded {retryCount, retryTime, cause}. A non-retriable failure rejects at once,
 * wrapped in KafkaJSNonRetriableError. `bail(err)` rejects with err unwrapped and stops further attempts.
 */
export function createRetrier(options: RetryOptions = {}, deps: RetrierDeps = {}): Retrier {
  const random = deps.random ?? Math.random
  const schedule = deps.setTimeout ?? ((fn: () => void, ms: number) => setTimeout(fn, ms))
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined))
  const config: BackoffOptions = { ...retryDefaults(), ...defined }

  return <T>(fn: RetryFn<T>) =>
    new Promise<T>((resolve, reject) => {
      let aborted = false
      const bail: Bail = (error) => {
        aborted = true
        reject(error ?? new Error('Aborted'))
      }

      const attempt = (retryTime: number, retryCount: number): void => {
        if (aborted) return
        const following = nextRetryTime(retryTime, config, random)
        let result: Promise<T>
        try {
          result = Promise.resolve(fn(bail, retryCount, retryTime))
        } catch (e) {
          result = Promise.reject(e)
        }
        result.then(resolve, (e: unknown) => {
          if (aborted) return
          if (!isRetriableHandlerError(e)) {
            reject(new NonRetriableWithCause(asErrorLike(e), { cause: causeOf(e) }))
          } else if (retryCount < config.retries) {
            schedule(() => attempt(following, retryCount + 1), retryTime)
          } else {
            // kafkajs's constructor sets `cause` to the error itself.
            reject(new KafkaJSNumberOfRetriesExceeded(asErrorLike(e), { retryCount, retryTime }))
          }
        })
      }

      attempt(randomFromRetryTime(config.factor, config.initialRetryTime, random), 0)
    })
}
