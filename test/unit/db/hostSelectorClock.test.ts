// The backoff between failed probing rounds is timed on the monotonic clock: a wall-clock step back (NTP, a VM
// resumed) right after a failed round must not hold every new connection for the size of the step.
import net from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { HostSelector } from '../../../src/db/connectionHosts.js'

/** a port on 127.0.0.1 that was free a moment ago: connects to it are refused */
async function closedPort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

afterEach(() => void vi.useRealTimers())

describe('HostSelector backoff', () => {
  it('is not stretched by a wall-clock step back after a failed round', async () => {
    const port = await closedPort()
    const selector = new HostSelector({
      hosts: [{ host: '127.0.0.1', port }],
      target: 'any',
      clientConfig: { user: 'postgres', database: 'test' },
      probeTimeoutMs: 1000,
      initialBackoffMs: 200,
      maxBackoffMs: 200,
    })
    await expect(selector.select()).rejects.toThrow(/no PostgreSQL host/)
    // only Date moves (timers and performance.now() stay real): the clock goes back 30 minutes
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() - 30 * 60_000)
    const started = performance.now()
    // before: the next round slept until the wall clock was past the backoff again, i.e. 30 minutes
    const second = await Promise.race([
      selector.select().then(
        () => 'connected',
        () => 'probed',
      ),
      new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5000)),
    ])
    expect(second).toBe('probed')
    expect(performance.now() - started).toBeLessThan(5000)
  })
})
