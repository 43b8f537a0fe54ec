// Tracing instrumentations for kafkajs (@opentelemetry/instrumentation-kafkajs, and the other shimmer-based ones)
// patch `Kafka.prototype.producer` / `consumer` of whatever module an `import 'kafkajs'` resolves to. Behind the
// register hook that can be this package: the ESM loader of @opentelemetry/instrumentation matches the import by
// its specifier, and our version falls inside the instrumentation's supported range (>=0.3.0 <3) from 0.3.0 on.
// Its wrappers would then add a second `send` / `process` span per operation (labelled messaging.system kafka,
// with a traceparent of its own) around the ones this package makes. A Kafka instance therefore keeps the methods
// its class was defined with when a shimmer wrapped them later: one span per operation, ours. Other replacements
// (a test's spy) carry no shimmer marks and are left alone.

/** The methods kafkajs instrumentations wrap on `Kafka.prototype`. */
const WRAPPED_BY_INSTRUMENTATIONS = ['producer', 'consumer'] as const

type Methods = Record<(typeof WRAPPED_BY_INSTRUMENTATIONS)[number], unknown>

/** shimmer's marks on a wrapper (OpenTelemetry's `isWrapped` tests the same). */
function isShimmerWrapper(fn: unknown): boolean {
  return (
    typeof fn === 'function' &&
    (fn as { __wrapped?: unknown }).__wrapped === true &&
    typeof (fn as { __original?: unknown }).__original === 'function'
  )
}

/** The class's own methods, taken when the module is evaluated, before any require / import hook sees it. */
export function ownMethods(prototype: Methods): Methods {
  return Object.fromEntries(WRAPPED_BY_INSTRUMENTATIONS.map((name) => [name, prototype[name]])) as Methods
}

/** Gives `instance` the class's own methods wherever an instrumentation has wrapped the prototype's since. */
export function bypassInstrumentationWrappers(instance: Methods, prototype: Methods, own: Methods): void {
  for (const name of WRAPPED_BY_INSTRUMENTATIONS) {
    if (prototype[name] !== own[name] && isShimmerWrapper(prototype[name])) {
      Object.defineProperty(instance, name, { value: own[name], writable: true, configurable: true, enumerable: false })
    }
  }
}
