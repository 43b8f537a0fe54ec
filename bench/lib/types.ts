import type pg from 'pg'
import type { Backend, Scenario } from './args.js'
import type { Target } from './target.js'

/** One measured number. `key` is stable across runs (JSON consumers and targets use it). */
export interface Row {
  key: string
  scenario: Scenario
  label: string
  unit: string
  value: number
  /** shown next to the value, e.g. MB/s or duplicates */
  note?: string
  detail?: Record<string, unknown>
}

export interface Sizes {
  produce: number
  /** batch 1 is bound by the WAL flush per transaction: fewer messages */
  produceBatch1: number
  /** sends outstanding at a time for batch 1 (each is its own transaction; concurrent ones share a WAL flush) */
  produceBatch1InFlight: number
  consume: number
  fanout: number
  parallel: number
  latencySeconds: number
  latencyRate: number
  footprint: number
  transactionSeconds: number
  /** scaling: messages per run, and the partition and group counts it steps through */
  scalingMessages: number
  scalingPartitions: number[]
  scalingGroups: number[]
  /** producer processes sending at once (to one partition, then to 16) */
  scalingProducers: number[]
  /** stored messages a member drains */
  scalingBacklogs: number[]
  /** produce + consume (5,000 msg/s) with maintenance on a topic with 10 s retention (pgQueue; 0: skipped). The
   * full run's 720 s churn 3.6 M messages: an hour at 1,000 msg/s. */
  scalingChurnSeconds: number
  /** consumer server CPU per message (bench/scenarios/serverCost.ts): every case, or the 73-time-partition one */
  scalingServerCost: 'all' | 'one'
}

export const FULL: Sizes = {
  produce: 200_000,
  produceBatch1: 10_000,
  produceBatch1InFlight: 64,
  consume: 200_000,
  fanout: 200_000,
  parallel: 200_000,
  latencySeconds: 30,
  latencyRate: 1000,
  footprint: 1_000_000,
  transactionSeconds: 10,
  scalingMessages: 100_000,
  scalingPartitions: [1, 16, 128, 1024],
  scalingGroups: [1, 3, 10, 30],
  scalingProducers: [1, 4, 16],
  scalingBacklogs: [1_000_000, 10_000_000],
  scalingChurnSeconds: 720,
  scalingServerCost: 'all',
}

export const QUICK: Sizes = {
  produce: 20_000,
  produceBatch1: 2_000,
  produceBatch1InFlight: 64,
  consume: 20_000,
  fanout: 20_000,
  parallel: 20_000,
  latencySeconds: 5,
  latencyRate: 1000,
  footprint: 50_000,
  transactionSeconds: 3,
  scalingMessages: 10_000,
  scalingPartitions: [1, 16],
  scalingGroups: [1, 3],
  scalingProducers: [2],
  scalingBacklogs: [],
  scalingChurnSeconds: 0,
  scalingServerCost: 'one',
}

export interface RunContext {
  backend: Backend
  target: Target
  sizes: Sizes
  /** unique per run: topic and group names */
  runId: string
  log: (msg: string) => void
  /** pgqueue only: an admin pool on the bench database and the schema */
  pg?: { pool: pg.Pool; schema: string }
  /** kafka only: the local broker's log directory, when the bench started the broker */
  kafkaDataDir?: string
}

export type ScenarioRun = (ctx: RunContext) => Promise<Row[]>
