// The server's loopback port: the requested one, else the one it had last time while free, else a fresh one.
import { createServer } from 'node:net'
import { HOST } from './probe.js'

export async function choosePort(requested: number | undefined, remembered: number | undefined, fresh: boolean): Promise<number> {
  if (requested) return requested
  if (!fresh && remembered && (await portIsFree(remembered))) return remembered
  return freePort()
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, HOST, () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, HOST, () => server.close(() => resolve(true)))
  })
}
