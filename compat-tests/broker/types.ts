export interface RunningBroker {
  brokers: string[]
  /** Where the broker came from, for the run's log. */
  source: string
  timings: { fetchJarsMs?: number; startMs: number }
  stop(): Promise<void>
}
