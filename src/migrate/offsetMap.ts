// Where each copied message landed: runs of (source offset, destination offset, length) per partition. Offsets are
// dense in pgQueue and in a plain Kafka log, so a partition copied in one go is a single run; a Kafka source with
// gaps (compaction, transaction markers) or a resume adds runs. A committed offset (the next offset to read)
// translates to the destination offset of the first copied message at or after it.

/** [sourceStart, destinationStart, length] */
export type Run = [number, number, number]

/** Appends `source` -> `destination` (one message), extending the last run when both sides continue it. */
export function record(runs: Run[], source: number, destination: number): void {
  const last = runs[runs.length - 1]
  if (last && last[0] + last[2] === source && last[1] + last[2] === destination) last[2]++
  else runs.push([source, destination, 1])
}

/**
 * The destination offset a group committed at `committed` (source) resumes from: the first copied message at or
 * after it, or `destinationEnd` when the group had read everything copied. A group behind the first copied message
 * (retention had deleted what it had not read) starts at the first copied one, as it would have in the source.
 */
export function translate(runs: readonly Run[], committed: number, destinationEnd: number): number {
  for (const [source, destination, length] of runs) {
    if (committed < source) return destination
    if (committed < source + length) return destination + (committed - source)
  }
  return destinationEnd
}
