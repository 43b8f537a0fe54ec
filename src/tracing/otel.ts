// @opentelemetry/api is an optional peer dependency: an app that traces has it (its SDK depends on it), and then
// our spans join the app's tracer provider and propagator; without it, or without a registered SDK, tracing is
// the API's no-op. Loaded on first use so `require('kafkajs-pgqueue')` does not pay for it.
import type * as Api from '@opentelemetry/api'
import { lazyModule } from '../lazyModule.js'

const load = lazyModule<typeof Api>('@opentelemetry/api')
let api: typeof Api | null | undefined

/** The OpenTelemetry API, or null when the app has not installed it. */
export function otel(): typeof Api | null {
  if (api === undefined) {
    try {
      api = load()
    } catch {
      api = null
    }
  }
  return api
}
