import type { Admin, AdminConfig, Logger } from 'kafkajs'
import type { PgQueueContext } from '../client/context.js'
import { KafkaJSNotImplemented } from '../kafkajs/errors.js'

// Placeholder until the admin module lands: every method reports that it is not implemented yet.
export function createAdmin(_ctx: PgQueueContext, rootLogger: Logger, _config?: AdminConfig): Admin {
  const logger = rootLogger.namespace('Admin')
  return new Proxy({ logger: () => logger } as unknown as Admin, {
    get: (target, prop) =>
      prop in target ? (target as never)[prop] : () => Promise.reject(new (KafkaJSNotImplemented as unknown as new (m: string) => Error)(`admin.${String(prop)}`)),
  })
}
