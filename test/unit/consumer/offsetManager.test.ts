import { describe, expect, it } from 'vitest'
import { createLogger } from '../../../src/kafkajs/logger.js'
import { logLevel } from '../../../src/kafkajs/exports.js'
import { consumerEvents, createInstrumentationEmitter } from '../../../src/kafkajs/instrumentation.js'
import { OffsetManager, type OffsetWrite, type OffsetWriter } from '../../../src/consumer/offsetManager.js'
import { PartitionState } from '../../../src/consumer/partitionState.js'

/** A writer that records every write and "holds" the partitions listed in `held`. */
function fakeWriter(held: Set<string>) {
  const writes: Array<{ commits: OffsetWrite[]; exact: boolean }> = []
  let gate: Promise<void> = Promise.resolve()
  let entered: () => void = () => undefined
  const writer: OffsetWriter & { writes: typeof writes; hold(p: Promise<void>): Promise<void> } = {
    writes,
    hold: (p) => {
      gate = p
      return new Promise<void>((r) => (entered = r))
    },
    async write(commits, { exact }) {
      entered()
      await gate
      writes.push({ commits, exact })
      return commits
        .filter((c) => held.has(`${c.topicId}:${c.partition}`))
        .map((c) => ({
          topicId: c.topicId,
          partition: c.partition,
          offset: c.offset ?? String(c.priorityPositions!.reduce((a, b) => (a < b ? a : b))),
        }))
    },
    topicIds: async (topics) => new Map(topics.map((t) => [t, '1'])),
  }
  return writer
}

function setup(opts: { autoCommit?: boolean; held?: string[] } = {}) {
  const state = new PartitionState('t', '1', 0, 0n, null)
  const partitions = new Map([[state.key, state]])
  const writer = fakeWriter(new Set(opts.held ?? ['1:0']))
  const offsets = new OffsetManager({
    writer,
    owner: { memberId: 'm', generation: 1, partitions, topicName: () => 't' },
    groupId: 'g',
    autoCommit: opts.autoCommit ?? true,
    autoCommitInterval: null,
    autoCommitThreshold: null,
    emitter: createInstrumentationEmitter(consumerEvents),
    logger: createLogger({ level: logLevel.NOTHING }),
  })
  return { state, writer, offsets }
}

describe('OffsetManager', () => {
  it('commits resolved per-priority positions and marks the partition clean', async () => {
    const { state, writer, offsets } = setup()
    state.resolve(3n, 5)
    await offsets.commit([state])
    expect(writer.writes).toHaveLength(1)
    expect(writer.writes[0].commits[0].priorityPositions![5]).toBe(3n)
    expect(writer.writes[0].exact).toBe(false)
    expect(state.dirty).toBe(false)
  })

  it('keeps progress resolved while a commit was in flight dirty for the next one', async () => {
    const { state, writer, offsets } = setup()
    state.resolve(3n, 5)
    let open!: () => void
    const started = writer.hold(new Promise((r) => (open = r)))
    const running = offsets.commit([state])
    await started
    state.resolve(4n, 5)
    open()
    await running
    expect(state.dirty).toBe(true)
  })

  it('batches finished in one turn of the event loop share one background commit', async () => {
    const { state, writer, offsets } = setup()
    const other = new PartitionState('t', '1', 1, 0n, null)
    state.resolve(2n, 5)
    offsets.commitInBackground(state)
    // the runner's awaits between two batches of a fetch: promise hops, no I/O
    for (let i = 0; i < 5; i++) await Promise.resolve()
    other.resolve(4n, 5)
    offsets.commitInBackground(other)
    await offsets.drain()
    expect(writer.writes).toHaveLength(1)
    expect(writer.writes[0].commits.map((c) => c.partition)).toEqual([0, 1])
  })

  it('runs writes in the order asked for, background ones included', async () => {
    const { state, writer, offsets } = setup()
    let open!: () => void
    writer.hold(new Promise((r) => (open = r)))
    state.resolve(2n, 5)
    offsets.commitInBackground(state)
    const seek = offsets.commitSeek(state, 1n)
    open()
    await seek
    expect(writer.writes.map((w) => w.exact)).toEqual([false, true])
  })

  it('a refused write revokes the partition; an explicit one throws REBALANCE_IN_PROGRESS', async () => {
    const { state, offsets } = setup({ held: [] })
    state.resolve(2n, 5)
    await offsets.commit([state])
    expect(state.revoked).toBe(true)
    const fresh = setup({ held: [] })
    await expect(fresh.offsets.commitExplicit([{ topic: 't', partitions: [{ partition: 0, offset: '1' }] }])).rejects.toMatchObject({
      type: 'REBALANCE_IN_PROGRESS',
    })
    expect(fresh.state.revoked).toBe(true)
  })

  it('an explicit commit never covers a message passed over by priority order', async () => {
    const { state, writer, offsets } = setup({ autoCommit: false })
    // five messages at priority 5 (seqs 1..5), then an urgent one (seq 6) handed out first
    state.handOut(6n, 0)
    await offsets.commitExplicit([{ topic: 't', partitions: [{ partition: 0, offset: '6' }] }])
    const positions = writer.writes[0].commits[0].priorityPositions!
    expect(positions[0]).toBe(6n)
    expect(positions[5]).toBe(0n)
  })

  it('an explicit commit without priorities stores exactly the offset, ahead of or behind what was handed out', async () => {
    const { state, writer, offsets } = setup({ autoCommit: false })
    state.handOut(10n, 5)
    await offsets.commitExplicit([{ topic: 't', partitions: [{ partition: 0, offset: '4' }] }])
    await offsets.commitExplicit([{ topic: 't', partitions: [{ partition: 0, offset: '50' }] }])
    expect(writer.writes.map((w) => w.commits[0].priorityPositions![5])).toEqual([4n, 50n])
    expect(writer.writes.every((w) => w.exact)).toBe(true)
  })

  it('with autoCommit off, background, interval and revoke commits write nothing', async () => {
    const { state, writer, offsets } = setup({ autoCommit: false })
    state.resolve(3n, 5)
    offsets.commitInBackground(state)
    await offsets.commitIfNecessary()
    await offsets.commitIfAuto([state])
    await offsets.commitSeek(state, 1n)
    await offsets.drain()
    expect(writer.writes).toEqual([])
  })
})
