// A logger with KafkaJS's shape and semantics, so user-supplied logCreators (NestJS, kafkajs-dlq, ...)
// receive exactly the entries they would get from kafkajs.
import kafkajs from './upstream.js'
import type { Logger, logCreator as LogCreator, logLevel as LogLevel } from 'kafkajs'

export const logLevel = kafkajs.logLevel
export type { Logger, LogCreator, LogLevel }

export interface LoggerOptions {
  level?: LogLevel
  logCreator?: LogCreator
}

const LEVEL_BY_NAME: Record<string, LogLevel> = {
  NOTHING: logLevel.NOTHING,
  ERROR: logLevel.ERROR,
  WARN: logLevel.WARN,
  INFO: logLevel.INFO,
  DEBUG: logLevel.DEBUG,
}

/** KAFKAJS_LOG_LEVEL (a level name, any case) beats whatever the code asked for, as in kafkajs. */
function envOverride<T extends LogLevel | null>(level: T): LogLevel | T {
  const name = (process.env.KAFKAJS_LOG_LEVEL ?? '').toUpperCase()
  return Object.hasOwn(LEVEL_BY_NAME, name) ? LEVEL_BY_NAME[name]! : level
}

/** kafkajs's default: one JSON line per entry, level label first, namespace as a message prefix. */
export const defaultLogCreator: LogCreator =
  () =>
  ({ namespace, level, label, log }) => {
    const prefix = namespace ? `[${namespace}] ` : ''
    const line = JSON.stringify({ level: label, ...log, message: `${prefix}${log.message}` })
    switch (level) {
      case logLevel.ERROR:
        return console.error(line)
      case logLevel.WARN:
        return console.warn(line)
      case logLevel.INFO:
        return console.info(line)
      case logLevel.DEBUG:
        return console.log(line)
    }
  }

const SECRET_KEYS = new Set(['password', 'connectionstring'])
const REDACTED = '[redacted]'
// user:password@ inside a URL (postgres://u:p@h/db); the password part is replaced.
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*):[^@\s]*@/gi

/** Replace secrets in a string: URL passwords. */
export function redactString(text: string): string {
  return text.replace(URL_CREDENTIALS, `$1:${REDACTED}@`)
}

/**
 * Copy of `extra` with password / connectionString values (any depth, any key case) replaced and
 * URL credentials scrubbed from strings, so config objects can be logged safely.
 */
export function redact<T>(extra: T): T {
  return redactValue(extra, new WeakMap()) as T
}

function redactValue(value: unknown, seen: WeakMap<object, unknown>): unknown {
  if (typeof value === 'string') return redactString(value)
  if (value === null || typeof value !== 'object') return value
  // Buffers, Dates, Errors etc. are logged by their own serialisation; only walk plain data.
  const proto = Object.getPrototypeOf(value)
  const isArray = Array.isArray(value)
  if (!isArray && proto !== Object.prototype && proto !== null) return value
  if (seen.has(value)) return seen.get(value)
  const out: Record<string, unknown> | unknown[] = isArray ? [] : {}
  seen.set(value, out)
  for (const [k, v] of Object.entries(value)) {
    const replaced = SECRET_KEYS.has(k.toLowerCase()) && v != null ? REDACTED : redactValue(v, seen)
    Object.defineProperty(out, k, { value: replaced, enumerable: true, writable: true, configurable: true })
  }
  return out
}

/**
 * Same contract as kafkajs's createLogger: `namespace()` loggers share the root level unless given
 * their own, and `setLogLevel` on any of them changes the root level.
 */
export function createLogger({ level = logLevel.INFO, logCreator = defaultLogCreator }: LoggerOptions = {}): Logger {
  let rootLevel: LogLevel = envOverride(level)
  const write = logCreator(rootLevel)

  const make = (namespace: string | undefined, ownLevel: LogLevel | null): Logger => {
    const current = () => ownLevel ?? rootLevel
    const at =
      (label: string, entryLevel: LogLevel) =>
      (message: string, extra: object = {}): void => {
        if (entryLevel > current()) return
        write({
          // undefined for the root logger, as in kafkajs (its .d.ts says string)
          namespace: namespace as string,
          level: entryLevel,
          label,
          log: { timestamp: new Date().toISOString(), logger: 'kafkajs', message, ...redact(extra) },
        })
      }
    return {
      info: at('INFO', logLevel.INFO),
      error: at('ERROR', logLevel.ERROR),
      warn: at('WARN', logLevel.WARN),
      debug: at('DEBUG', logLevel.DEBUG),
      namespace: (ns: string, nsLevel?: LogLevel) => make(ns, envOverride(nsLevel ?? null)),
      setLogLevel: (newLevel: LogLevel) => {
        rootLevel = newLevel
      },
    }
  }

  return make(undefined, null)
}
