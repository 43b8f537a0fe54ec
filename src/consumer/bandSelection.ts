import type { PriorityBand } from '../config/types.js'
import { bandIndexOf, redistributeUnused, splitBatchAcrossBands } from '../config/priorityBands.js'
import { PRIORITY_LEVELS, type FetchedRow } from '../store/fetch.js'

export interface BatchLimits {
  bands: readonly PriorityBand[]
  /** messages per batch (DATAHUB_PGQUEUE_CONSUMER_MAX_BATCH_MESSAGES) */
  perBatch: number
  /** consecutive batches wanted */
  count: number
  /** payload bytes per batch (maxBytesPerPartition; at least one message always goes) */
  maxBytes: number
  /** the per-priority row limit the fetch used: a priority that hit it may have more rows than were read */
  fetchLimit: number
}

/**
 * Weighted fair queuing across priority bands, for up to `count` consecutive batches of one partition: each
 * batch's budget is split by weight, slots a band cannot use go to bands that have more, and the byte budget caps
 * the batch. A further batch is only cut while each priority whose fetch hit the row limit still has a full
 * batch's worth left: every batch is then exactly what a fresh fetch would have given.
 */
export function selectBatches(rows: readonly FetchedRow[], limits: BatchLimits): FetchedRow[][] {
  const { bands, perBatch, count, maxBytes, fetchLimit } = limits
  const byBand: FetchedRow[][] = bands.map(() => [])
  const perPriority = new Array<number>(PRIORITY_LEVELS).fill(0)
  for (const row of rows) {
    byBand[bandIndexOf(bands, row.priority)].push(row)
    perPriority[row.priority]++
  }
  const left = [...perPriority]
  const budgets = splitBatchAcrossBands(bands, perBatch)
  const cursor = byBand.map(() => 0)
  const out: FetchedRow[][] = []
  while (out.length < count) {
    if (out.length > 0 && perPriority.some((n, p) => n >= fetchLimit && left[p] < perBatch)) break
    const takes = redistributeUnused(
      budgets,
      byBand.map((b, i) => b.length - cursor[i]),
    )
    const chosen: FetchedRow[] = []
    let bytes = 0
    bands: for (let band = 0; band < byBand.length; band++) {
      for (let k = 0; k < takes[band]; k++) {
        const row = byBand[band][cursor[band]]
        bytes += row.payloadBytes
        if (chosen.length > 0 && bytes > maxBytes) break bands
        chosen.push(row)
        cursor[band]++
        left[row.priority]--
      }
    }
    if (chosen.length === 0) break
    out.push(chosen)
  }
  return out
}
