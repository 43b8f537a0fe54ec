// Whether a crash is retriable, as KafkaJS decides it: a run out of retries, or an original cause that is. KafkaJS
// reads the last error of the `cause` chain, whose links are all its own errors; ours end in the driver's error that
// a KafkaJS error wraps (node-postgres's ECONNRESET has no `retriable`), so the chain is read down to its last
// KafkaJS error.
import { KafkaJSError } from '../kafkajs/errors.js'

export function isRetriableCrash(e: Error): boolean {
  if (e.name === 'KafkaJSNumberOfRetriesExceeded') return true
  let original: Error = e
  for (let cause = causeOf(original); cause instanceof KafkaJSError; cause = causeOf(original)) original = cause
  return (original as { retriable?: boolean }).retriable === true
}

const causeOf = (e: Error): unknown => (e as { cause?: unknown }).cause
