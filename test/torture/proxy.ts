// A TCP proxy between the workers and PostgreSQL that injects network faults on demand: cut a connection right
// after the server received a request (its answer — maybe a COMMIT's — is lost), cut every connection whose request
// has waited too long for an answer (a client-side timeout while the server still works on it), or hold every
// packet back for a while (a slow network: sessions and statements time out); after a failover it points at the new
// primary.
import net from 'node:net'

export interface FaultProxy {
  port: number
  /**
   * The next request on a connection whose application_name satisfies `which` reaches the server; its answer is
   * swallowed and the connection cut.
   */
  dropNext(which: (applicationName: string) => boolean): void
  /**
   * Until `untilMs` (epoch ms), cuts every connection whose request has had no answer for `afterMs`: the server goes
   * on with the statement (a backend waiting on a lock notices no disconnect) while the client retries elsewhere.
   */
  cutSlow(afterMs: number, untilMs: number): void
  /** delays traffic in both directions by `ms` until `untilMs` (epoch ms) */
  delay(ms: number, untilMs: number): void
  /** new connections go to `port` (a failover's new primary); every open one is cut, as the old server's were */
  retarget(port: number): void
  close(): Promise<void>
}

const PROTOCOL_3 = 0x00030000

/** A parameter of a startup packet: length, protocol, then name\0value\0 pairs. */
function startupParameter(packet: Buffer, name: string): string {
  const pairs = packet.subarray(8).toString('utf8').split('\0')
  const at = pairs.indexOf(name)
  return at >= 0 && at % 2 === 0 ? (pairs[at + 1] ?? '') : ''
}

export async function startFaultProxy(targetPort: number): Promise<FaultProxy> {
  const sockets = new Set<net.Socket>()
  /** each connection's cut, and since when its request waits for a first byte of answer (0: none waiting) */
  const waiting = new Map<() => void, number>()
  let slowTimer: NodeJS.Timeout | undefined
  let armed: ((applicationName: string) => boolean) | undefined
  let delayMs = 0
  let delayUntil = 0
  // one lane per direction: a chunk never overtakes an earlier, still delayed one
  const lane = () => {
    let lastAt = 0
    return (fn: () => void) => {
      const now = Date.now()
      const at = Math.max(now < delayUntil ? now + delayMs : now, lastAt)
      lastAt = at
      if (at <= now) fn()
      else setTimeout(fn, at - now)
    }
  }
  let target = targetPort
  const server = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1')
    sockets.add(client).add(upstream)
    let doomed = false
    let applicationName = ''
    const toServer = lane()
    const toClient = lane()
    const close = () => {
      waiting.delete(cut)
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    const cut = () => {
      doomed = true
      close()
    }
    waiting.set(cut, 0)
    client.on('data', (chunk) => {
      if (!applicationName && chunk.length >= 8 && chunk.readUInt32BE(4) === PROTOCOL_3) applicationName = startupParameter(chunk, 'application_name')
      // the startup packet has no type byte (it starts with a zero length byte); Terminate (X) is no request
      if (armed && chunk[0] !== 0 && chunk[0] !== 0x58 && armed(applicationName)) {
        armed = undefined
        doomed = true
        setTimeout(close, 200) // time for the server to act on it
      }
      if (chunk[0] !== 0 && waiting.get(cut) === 0) waiting.set(cut, Date.now())
      toServer(() => upstream.write(chunk))
    })
    upstream.on('data', (chunk) => {
      if (waiting.has(cut)) waiting.set(cut, 0)
      if (!doomed) toClient(() => client.write(chunk))
    })
    client.on('error', close).on('close', close)
    upstream.on('error', close).on('close', close)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    dropNext: (which) => void (armed = which),
    cutSlow(afterMs, untilMs) {
      clearInterval(slowTimer)
      slowTimer = setInterval(() => {
        const now = Date.now()
        if (now >= untilMs) return clearInterval(slowTimer)
        for (const [cut, since] of waiting) if (since > 0 && now - since >= afterMs) cut()
      }, 25)
    },
    delay(ms, untilMs) {
      delayMs = ms
      delayUntil = untilMs
    },
    retarget(port) {
      target = port
      for (const s of sockets) s.destroy()
    },
    async close() {
      clearInterval(slowTimer)
      for (const s of sockets) s.destroy()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
