// The migration's state file: what has been copied where, so an interrupted run resumes instead of starting over.
// Written after every acknowledged batch (write to a temp file, then rename: a crash leaves the old or the new one).
import { promises as fs } from 'node:fs'
import type { Run } from './offsetMap.js'

export type Backend = 'pgqueue' | 'kafka'

export interface PartitionState {
  partition: number
  /** the source's low and high watermarks when the run first planned this partition */
  sourceStart: number
  sourceEnd: number
  /** next source offset to read */
  sourceNext: number
  /** destination high watermark before the copy, and the next offset the copy expects to get */
  destinationStart: number
  destinationNext: number
  copied: number
  checksum: string
  runs: Run[]
}

export interface TopicState {
  topic: string
  numPartitions: number
  configEntries: Array<{ name: string; value: string }>
  partitions: PartitionState[]
}

export interface MigrationState {
  version: 1
  from: Backend
  to: Backend
  topics: Record<string, TopicState>
}

export async function loadState(file: string): Promise<MigrationState | undefined> {
  let text: string
  try {
    text = await fs.readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  const state = JSON.parse(text) as MigrationState
  if (state.version !== 1) throw new Error(`${file}: unknown state file version ${String(state.version)}`)
  return state
}

export async function saveState(file: string, state: MigrationState): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`
  await fs.writeFile(tmp, JSON.stringify(state))
  await fs.rename(tmp, file)
}
