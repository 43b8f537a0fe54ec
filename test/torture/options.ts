// Command-line options of `npm run check:torture`, and the mix: everything a transport supports (CI runs all of it on
// pgQueue since the fixes of #13, #14 and #22 landed), narrowed by the --no-* and list options.
import { parseArgs } from 'node:util'
import type { FaultKind } from './history.js'
import { CONSUMER_OPS, HANDLERS, PRODUCER_OPS, type ConsumerOp, type Handler, type ProducerOp, type Transport } from './spec.js'

export const FAULTS: readonly FaultKind[] = ['kill', 'stop', 'terminate', 'restart', 'drop', 'delay', 'clock', 'lock', 'connections', 'promote']

export interface Mix {
  producerOps: ProducerOp[]
  handlers: Handler[]
  consumerOps: ConsumerOp[]
  faults: FaultKind[]
  eos: boolean
  priorities: boolean
  /** transactions and outbox sends that span partitions (#14 item 1: they deadlock at COMMIT on main) */
  multiPartition: boolean
  /** a topic with poison messages and a group that moves them to a dead-letter topic with deadLetter() */
  deadLetter: boolean
  maintenance: boolean
}

export interface Options extends Mix {
  transport: Transport
  seconds: number
  seed: number
  processes: number
  drainSeconds: number
  stuckBoundMs: number
  sessionTimeoutMs: number
  /** mean pause between two faults */
  faultEveryMs: number
  /** PostgreSQL to use instead of a private server (no restart, connections or promote fault then) */
  databaseUrl?: string
  brokers?: string[]
  /** where the history is written; kept after the run */
  dir?: string
  /** a JSON report in vitest's shape (one "test" per guarantee kind), for CI's closing summary line */
  report?: string
}

/** What each transport can do at all: Kafka has no priorities, outbox, maintenance, or a proxy we can put in front. */
export function fullMix(transport: Transport): Mix {
  const kafka = transport === 'kafka'
  return {
    producerOps: PRODUCER_OPS.filter((op) => !(kafka && op.startsWith('outbox'))),
    handlers: [...HANDLERS],
    consumerOps: [...CONSUMER_OPS],
    faults: kafka ? ['kill', 'stop'] : [...FAULTS],
    eos: true,
    priorities: !kafka,
    multiPartition: true,
    // on Kafka the move is at-least-once without a transactionalId: the exactly-once check is pgQueue's
    deadLetter: !kafka,
    maintenance: !kafka,
  }
}

const list = <T extends string>(value: string | undefined, allowed: readonly T[], name: string): T[] | undefined => {
  if (value === undefined) return undefined
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const bad = items.filter((i) => !allowed.includes(i as T))
  if (bad.length > 0) throw new Error(`--${name}: unknown ${bad.join(', ')} (allowed: ${allowed.join(', ')})`)
  return items as T[]
}

export const USAGE = `npm run check:torture -- [--seconds N] [--seed S] [--processes P] [--faults ${FAULTS.join(',')}]
    [--transport pgqueue|kafka] [--ops ${PRODUCER_OPS.join(',')}] [--handlers ${HANDLERS.join(',')}]
    [--consumer-ops ${CONSUMER_OPS.join(',')}] [--no-eos] [--no-priorities] [--no-dead-letter] [--single-partition-txn] [--drain-seconds N] [--stuck-ms N]
    [--session-ms N] [--fault-every-ms N] [--database-url URL] [--dir DIR] [--report FILE]`

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string' },
      seed: { type: 'string' },
      processes: { type: 'string' },
      faults: { type: 'string' },
      transport: { type: 'string' },
      ops: { type: 'string' },
      handlers: { type: 'string' },
      'consumer-ops': { type: 'string' },
      'no-eos': { type: 'boolean' },
      'no-priorities': { type: 'boolean' },
      'no-dead-letter': { type: 'boolean' },
      'single-partition-txn': { type: 'boolean' },
      'drain-seconds': { type: 'string' },
      'stuck-ms': { type: 'string' },
      'session-ms': { type: 'string' },
      'fault-every-ms': { type: 'string' },
      'database-url': { type: 'string' },
      dir: { type: 'string' },
      report: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  })
  if (values.help) throw new Error(USAGE)
  const transport = (values.transport ?? env.DATAHUB_MESSAGING_TRANSPORT ?? 'pgqueue') as Transport
  if (transport !== 'pgqueue' && transport !== 'kafka') throw new Error(`--transport: pgqueue or kafka, got ${transport}`)
  const mix = fullMix(transport)
  const int = (v: string | undefined, fallback: number, name: string) => {
    if (v === undefined) return fallback
    const n = Number(v)
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name}: a whole number, got ${v}`)
    return n
  }
  const kafka = transport === 'kafka'
  const faults = list(values.faults, FAULTS, 'faults') ?? mix.faults
  if (kafka && faults.some((f) => f !== 'kill' && f !== 'stop'))
    throw new Error('--faults: the Kafka run supports kill and stop only (the broker is shared)')
  const options: Options = {
    ...mix,
    transport,
    producerOps: list(values.ops, PRODUCER_OPS, 'ops') ?? mix.producerOps,
    handlers: list(values.handlers, HANDLERS, 'handlers') ?? mix.handlers,
    consumerOps: list(values['consumer-ops'], CONSUMER_OPS, 'consumer-ops') ?? mix.consumerOps,
    faults,
    eos: mix.eos && !values['no-eos'],
    priorities: mix.priorities && !values['no-priorities'],
    deadLetter: mix.deadLetter && !values['no-dead-letter'],
    multiPartition: mix.multiPartition && !values['single-partition-txn'],
    seconds: int(values.seconds, 60, 'seconds'),
    seed: int(values.seed, Math.floor(Math.random() * 2 ** 31), 'seed'),
    processes: Math.max(3, int(values.processes, 6, 'processes')),
    drainSeconds: int(values['drain-seconds'], 90, 'drain-seconds'),
    // Kafka's brokers refuse sessions under 6 s (group.min.session.timeout.ms)
    sessionTimeoutMs: int(values['session-ms'], kafka ? 10_000 : 3000, 'session-ms'),
    stuckBoundMs: int(values['stuck-ms'], kafka ? 90_000 : 30_000, 'stuck-ms'),
    faultEveryMs: int(values['fault-every-ms'], 3000, 'fault-every-ms'),
    databaseUrl: values['database-url'],
    brokers: kafka ? (env.KAFKA_BROKERS ?? '').split(',').filter(Boolean) : undefined,
    dir: values.dir,
    report: values.report,
  }
  if (kafka && options.brokers!.length === 0) throw new Error('the Kafka run needs KAFKA_BROKERS')
  for (const f of ['restart', 'connections', 'promote'] as const)
    if (options.databaseUrl && options.faults.includes(f)) throw new Error(`--faults ${f} needs the private server (no --database-url)`)
  return options
}
