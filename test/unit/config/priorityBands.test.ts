import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DEFAULT_PRIORITY_BANDS_JSON } from '../../../src/config/defaults.js'
import { bandIndexOf, parsePriorityBands, redistributeUnused, splitBatchAcrossBands } from '../../../src/config/priorityBands.js'
import type { PriorityBand } from '../../../src/config/types.js'
import { KafkaJSNonRetriableError } from '../../../src/kafkajs/errors.js'
import { runs } from '../../helpers/property.js'

const VAR = 'DATAHUB_PGQUEUE_PRIORITY_BANDS'
const DEFAULT = parsePriorityBands(DEFAULT_PRIORITY_BANDS_JSON, VAR)

function expectBandError(input: string | PriorityBand[], reason: RegExp): void {
  let caught: unknown
  try {
    parsePriorityBands(input, VAR)
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(KafkaJSNonRetriableError)
  const message = (caught as Error).message
  expect(message).toContain(VAR)
  // the bad value is quoted back
  const shown = typeof input === 'string' ? JSON.stringify(input) : JSON.stringify(input)
  expect(message).toContain(shown)
  expect(message).toMatch(reason)
}

describe('parsePriorityBands', () => {
  it('parses the DataHub default', () => {
    expect(DEFAULT).toEqual([
      { range: [0, 3], weight: 70 },
      { range: [4, 6], weight: 20 },
      { range: [7, 9], weight: 10 },
    ])
  })

  it('sorts by range start and copies the input', () => {
    const input: PriorityBand[] = [
      { range: [5, 9], weight: 1 },
      { range: [0, 4], weight: 2.5 },
    ]
    const bands = parsePriorityBands(input, 'options.priorityBands')
    expect(bands.map((b) => b.range)).toEqual([
      [0, 4],
      [5, 9],
    ])
    expect(bands[0]).not.toBe(input[1])
    expect(input[0]!.range).toEqual([5, 9])
  })

  it('accepts a single band covering everything', () => {
    expect(parsePriorityBands('[{"range":[0,9],"weight":1}]', VAR)).toEqual([{ range: [0, 9], weight: 1 }])
  })

  it.each([
    ['not JSON', '[{range:[0,9]', /not valid JSON/],
    ['not an array', '{"range":[0,9],"weight":1}', /not a non-empty array/],
    ['empty array', '[]', /not a non-empty array/],
    ['gap', '[{"range":[0,3],"weight":70},{"range":[5,9],"weight":30}]', /gap: priorities 4\.\.4/],
    ['gap at the end', '[{"range":[0,8],"weight":1}]', /gap: priorities 9\.\.9/],
    ['gap at the start', '[{"range":[1,9],"weight":1}]', /gap: priorities 0\.\.0/],
    ['overlap', '[{"range":[0,4],"weight":70},{"range":[4,9],"weight":30}]', /overlap: priority 4/],
    ['duplicate band', '[{"range":[0,9],"weight":1},{"range":[0,9],"weight":1}]', /overlap/],
    ['above 9', '[{"range":[0,10],"weight":1}]', /outside 0\.\.9/],
    ['negative', '[{"range":[-1,9],"weight":1}]', /outside 0\.\.9/],
    ['min > max', '[{"range":[9,0],"weight":1}]', /min > max/],
    ['float bound', '[{"range":[0,9.5],"weight":1}]', /not \[min,max\] of integers/],
    ['three bounds', '[{"range":[0,5,9],"weight":1}]', /not \[min,max\]/],
    ['zero weight', '[{"range":[0,3],"weight":0},{"range":[4,9],"weight":1}]', /weight 0 is not a finite number > 0/],
    ['negative weight', '[{"range":[0,9],"weight":-5}]', /weight -5/],
    ['string weight', '[{"range":[0,9],"weight":"7"}]', /weight "7"/],
    ['missing weight', '[{"range":[0,9]}]', /weight undefined/],
    ['null band', '[null]', /band 0 is not an object/],
  ])('rejects %s', (_name, json, reason) => expectBandError(json, reason))

  it('rejects non-finite weights passed as options', () => {
    expectBandError([{ range: [0, 9], weight: Infinity }], /weight Infinity/)
    expectBandError([{ range: [0, 9], weight: NaN }], /weight NaN/)
  })
})

describe('bandIndexOf', () => {
  it('maps priorities to default bands', () => {
    expect([0, 3, 4, 5, 6, 7, 9].map((p) => bandIndexOf(DEFAULT, p))).toEqual([0, 0, 1, 1, 1, 2, 2])
    expect(bandIndexOf(DEFAULT, 10)).toBe(-1)
  })
})

describe('splitBatchAcrossBands', () => {
  it('splits 10 as 7/2/1 with the default bands (seed example)', () => {
    expect(splitBatchAcrossBands(DEFAULT, 10)).toEqual([7, 2, 1])
  })

  it('gives a budget of 1 to the heaviest band', () => {
    expect(splitBatchAcrossBands(DEFAULT, 1)).toEqual([1, 0, 0])
  })

  it('gives nothing for budget 0', () => {
    expect(splitBatchAcrossBands(DEFAULT, 0)).toEqual([0, 0, 0])
  })

  it('hands the remainder out by descending weight, not from band 0', () => {
    const bands = parsePriorityBands('[{"range":[0,3],"weight":10},{"range":[4,6],"weight":20},{"range":[7,9],"weight":70}]', VAR)
    expect(splitBatchAcrossBands(bands, 1)).toEqual([0, 0, 1])
    // 5 -> floors 0/1/3, remainder 1 to the 70 band
    expect(splitBatchAcrossBands(bands, 5)).toEqual([0, 1, 4])
  })

  it('breaks weight ties by lower band index', () => {
    const bands = parsePriorityBands('[{"range":[0,4],"weight":1},{"range":[5,9],"weight":1}]', VAR)
    expect(splitBatchAcrossBands(bands, 3)).toEqual([2, 1])
    const three = parsePriorityBands('[{"range":[0,2],"weight":1},{"range":[3,5],"weight":2},{"range":[6,9],"weight":2}]', VAR)
    // floors 0/0/0 for budget 2, remainder to bands 1 then 2
    expect(splitBatchAcrossBands(three, 2)).toEqual([0, 1, 1])
  })

  it('matches 500 with default bands', () => {
    expect(splitBatchAcrossBands(DEFAULT, 500)).toEqual([350, 100, 50])
    // floors 4/1/0, remainder 2 -> the 70 band, then the 20 band
    expect(splitBatchAcrossBands(DEFAULT, 7)).toEqual([5, 2, 0])
  })

  it('rejects a negative or fractional budget', () => {
    expect(() => splitBatchAcrossBands(DEFAULT, -1)).toThrow(RangeError)
    expect(() => splitBatchAcrossBands(DEFAULT, 1.5)).toThrow(RangeError)
  })
})

describe('redistributeUnused', () => {
  it('gives all traffic in the middle band the full budget (DataHub lost 1 of 10)', () => {
    const limits = splitBatchAcrossBands(DEFAULT, 10)
    expect(redistributeUnused(limits, [0, 50, 0])).toEqual([0, 10, 0])
  })

  it('moves unused slots backwards to higher-priority bands too', () => {
    expect(redistributeUnused([7, 2, 1], [50, 0, 0])).toEqual([10, 0, 0])
    expect(redistributeUnused([7, 2, 1], [0, 0, 50])).toEqual([0, 0, 10])
  })

  it('never takes more than is available', () => {
    expect(redistributeUnused([7, 2, 1], [3, 1, 2])).toEqual([3, 1, 2])
    expect(redistributeUnused([7, 2, 1], [3, 5, 0])).toEqual([3, 5, 0])
  })

  it('keeps initial limits when every band is busy', () => {
    expect(redistributeUnused([7, 2, 1], [100, 100, 100])).toEqual([7, 2, 1])
  })

  it('rejects mismatched lengths and negative counts', () => {
    expect(() => redistributeUnused([1, 2], [1])).toThrow(RangeError)
    expect(() => redistributeUnused([1], [-1])).toThrow(RangeError)
  })

  const bandsArb = fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 10 }).map((weights): PriorityBand[] => {
    // split 0..9 into weights.length contiguous ranges
    const n = weights.length
    return weights.map((weight, i) => ({
      range: [Math.floor((i * 10) / n), Math.floor(((i + 1) * 10) / n) - 1] as [number, number],
      weight,
    }))
  })

  it('property: split sums to the budget; final takes = min(budget, sum(available)) within availability', () => {
    fc.assert(
      fc.property(
        bandsArb,
        fc.integer({ min: 0, max: 100000 }),
        fc.array(fc.integer({ min: 0, max: 2000 }), { minLength: 10, maxLength: 10 }),
        (bands, budget, availAll) => {
          const parsed = parsePriorityBands(bands, 'prop')
          const limits = splitBatchAcrossBands(parsed, budget)
          expect(limits.reduce((a, b) => a + b, 0)).toBe(budget)
          expect(limits.every((n) => Number.isInteger(n) && n >= 0)).toBe(true)
          const available = availAll.slice(0, parsed.length)
          const takes = redistributeUnused(limits, available)
          const sum = takes.reduce((a, b) => a + b, 0)
          expect(sum).toBeLessThanOrEqual(budget)
          expect(sum).toBe(
            Math.min(
              budget,
              available.reduce((a, b) => a + b, 0),
            ),
          )
          takes.forEach((take, i) => {
            expect(take).toBeGreaterThanOrEqual(0)
            expect(take).toBeLessThanOrEqual(available[i]!)
            // a band keeps at least its fair share of what it could use
            expect(take).toBeGreaterThanOrEqual(Math.min(limits[i]!, available[i]!))
          })
        },
      ),
      { numRuns: runs(500) },
    )
  })

  it('property: each band gets within one slot of its exact proportional share', () => {
    fc.assert(
      fc.property(bandsArb, fc.integer({ min: 0, max: 100000 }), (bands, budget) => {
        const limits = splitBatchAcrossBands(bands, budget)
        const total = bands.reduce((s, b) => s + b.weight, 0)
        limits.forEach((limit, i) => {
          const exact = (budget * bands[i]!.weight) / total
          expect(Math.abs(limit - exact)).toBeLessThan(1 + 1e-9)
        })
      }),
    )
  })
})
