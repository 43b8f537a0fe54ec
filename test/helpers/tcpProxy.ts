// A TCP proxy in front of PostgreSQL that can cut a connection at the worst moment: after the server has received
// a request (and commits it) but before the client hears the answer.
import net from 'node:net'
import { afterAll } from 'vitest'

export interface CuttingProxy {
  connectionString: string
  /** The next request a client sends (after `skip` more) is delivered, its response swallowed, and that connection cut. */
  cutAfterNextRequest(skip?: number): void
  /** Cuts every open connection and refuses new ones for `ms` (the server as clients see it while it restarts). */
  blackout(ms: number): void
  cuts: number
}

export async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  const url = new URL(target)
  const sockets = new Set<net.Socket>()
  let armed = false
  let skipping = 0
  let refusingUntil = 0
  const proxy: CuttingProxy = {
    connectionString: '',
    cuts: 0,
    cutAfterNextRequest: (skip = 0) => void ((armed = true), (skipping = skip)),
    blackout(ms) {
      refusingUntil = Date.now() + ms
      for (const s of sockets) s.destroy()
    },
  }
  const server = net.createServer((client) => {
    if (Date.now() < refusingUntil) return void client.destroy()
    const upstream = net.connect(Number(url.port || 5432), url.hostname)
    sockets.add(client).add(upstream)
    let doomed = false
    client.on('data', (chunk) => {
      // only requests after startup can be doomed: the startup packet carries no type byte
      const request = chunk[0] !== 0 && chunk[0] !== 0x58 /* Terminate */
      if (armed && request && skipping > 0) skipping--
      else if (armed && request) {
        armed = false
        doomed = true
        proxy.cuts++
        // let the server read and commit it, then drop both sides without relaying the answer
        setTimeout(() => {
          client.destroy()
          upstream.destroy()
        }, 300)
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk) => {
      if (!doomed) client.write(chunk)
    })
    const close = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on('error', close).on('close', close)
    upstream.on('error', close).on('close', close)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port
  const via = new URL(target)
  via.hostname = '127.0.0.1'
  via.port = String(port)
  proxy.connectionString = via.toString()
  afterAll(async () => {
    for (const s of sockets) s.destroy()
    await new Promise((resolve) => server.close(resolve))
  })
  return proxy
}
