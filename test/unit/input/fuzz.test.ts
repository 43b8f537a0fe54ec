// Property tests over arbitrary input: validation is total (it returns or throws a KafkaJSNonRetriableError, never a
// TypeError or a RangeError from deep inside), and what it accepts is exactly what it was given, as bytes.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../../src/config/resolve.js'
import { validateOffsetEntry } from '../../../src/kafkajs/offsetValidation.js'
import { KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import { normalizeProducerBatch } from '../../../src/kafkajs/messageValidation.js'
import { runs } from '../../helpers/property.js'

const RUNS = Number(process.env.FUZZ_RUNS ?? 300)

/** Runs fn; returns what it returned, or the KafkaJSNonRetriableError it threw. Any other throw fails the property. */
function outcome<T>(fn: () => T): { ok: true; value: T } | { ok: false; error: Error } {
  try {
    return { ok: true, value: fn() }
  } catch (e) {
    if (!(e instanceof KafkaJSNonRetriableError))
      throw new Error(`not a KafkaJS error: ${(e as Error)?.name}: ${(e as Error)?.message}`, { cause: e })
    return { ok: false, error: e }
  }
}

const bytesOrString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)),
)
const anyish = fc.oneof(fc.anything({ maxDepth: 2 }), bytesOrString, fc.constant(null), fc.constant(undefined))
const message = fc.record(
  {
    key: fc.oneof(bytesOrString, fc.constant(null), anyish),
    value: fc.oneof(bytesOrString, bytesOrString, fc.constant(null), anyish),
    headers: fc.oneof(
      fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(bytesOrString, fc.array(bytesOrString, { maxLength: 3 }), anyish), { maxKeys: 4 }),
      anyish,
    ),
    partition: fc.oneof(fc.nat(8), fc.integer(), fc.double(), anyish),
    priority: fc.oneof(fc.integer({ min: 0, max: 9 }), fc.integer(), fc.double(), anyish),
    timestamp: fc.oneof(fc.nat(), fc.string(), anyish),
  },
  { requiredKeys: [] },
)

const asBytes = (v: unknown) => (typeof v === 'string' ? Buffer.from(v, 'utf8') : (v as Buffer))

describe('fuzz: producer input', () => {
  it('anything at all as sendBatch input: a value or a KafkaJSNonRetriableError', () => {
    fc.assert(
      fc.property(fc.anything(), (input) => {
        outcome(() => normalizeProducerBatch(input))
      }),
      { numRuns: runs(RUNS) },
    )
  })

  it('messages: accepted ones keep key, value, headers and partition exactly', () => {
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 200 }), (messages, maxMessageBytes) => {
        const result = outcome(() => normalizeProducerBatch([{ topic: 'fuzz', messages }], { maxMessageBytes }))
        if (!result.ok) return
        const [batch] = result.value
        batch.messages.forEach((n, i) => {
          const m = messages[i] as Record<string, unknown>
          expect(n.value).toEqual(m.value === null ? null : asBytes(m.value))
          expect(n.key).toEqual(m.key === null || m.key === undefined ? null : asBytes(m.key))
          expect(n.partition).toBe(m.partition ?? undefined)
          expect(n.priority).toBe(m.priority ?? 5)
          expect(n.sizeBytes).toBeLessThanOrEqual(maxMessageBytes)
          const expectedHeaders: Array<[string, Buffer]> = []
          for (const [k, raw] of Object.entries((m.headers ?? {}) as Record<string, unknown>)) {
            for (const v of Array.isArray(raw) ? raw : [raw]) if (v !== null && v !== undefined) expectedHeaders.push([k, asBytes(v)])
          }
          expect(n.headers).toEqual(expectedHeaders)
        })
      }),
      { numRuns: runs(RUNS) },
    )
  })
})

describe('fuzz: offsets', () => {
  const offsets = fc.oneof(
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
    fc.integer().map(String),
    fc.integer(),
    fc.double(),
    fc.string({ maxLength: 12 }),
    fc.anything({ maxDepth: 1 }),
  )
  it('seek / commit offsets: accepted ones are integers >= 0 (or -1 / -2 for seek)', () => {
    fc.assert(
      fc.property(offsets, fc.oneof(fc.nat(10), fc.anything({ maxDepth: 0 })), fc.boolean(), (offset, partition, allowSpecial) => {
        const entry = { topic: 't', partition: partition as number, offset: offset as string }
        const result = outcome(() => validateOffsetEntry(entry, { allowSpecial, checkMetadata: !allowSpecial }))
        if (!result.ok) return
        const value = BigInt(offset as string)
        expect(value >= 0n || (allowSpecial && (value === -1n || value === -2n))).toBe(true)
        expect(Number.isInteger(Number(partition)) && Number(partition) >= 0).toBe(true)
      }),
      { numRuns: runs(RUNS) },
    )
  })
})

describe('fuzz: environment', () => {
  const variables = [
    'MIN_CONNECTIONS',
    'MAX_CONNECTIONS',
    'STATEMENT_TIMEOUT_MS',
    'TOPIC_DEFAULT_PARTITION_COUNT',
    'RETENTION_MAX_AGE_SECONDS',
    'PRIORITY_BANDS',
    'PAYLOAD_COMPRESSION',
    'RETENTION_PARTMAN_INTERVAL',
    'SCHEMA',
    'TABLE_PREFIX',
    'LISTEN_ENABLED',
    'MAX_MESSAGE_BYTES',
    'MAINTENANCE_BATCH_DELETE_LIMIT',
    'EMPTY_POLL_SLEEP_MS',
    'TOPIC_DEFAULT_CONTENT_TYPE_MIME',
  ].map((v) => `DATAHUB_PGQUEUE_${v}`)
  it('any value of any variable: a config, or an error naming that variable', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...variables),
        fc.oneof(fc.string(), fc.integer().map(String), fc.constantFrom('', ' ', 'true', '1e3', '-0')),
        (variable, value) => {
          const result = outcome(() => resolveConfig({}, { [variable]: value }))
          if (!result.ok) expect(result.error.message).toContain(variable)
        },
      ),
      { numRuns: runs(RUNS) },
    )
  })
})
