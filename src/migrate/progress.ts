// A progress bar on stderr when it is a terminal (redrawn in place), else a line every 10%.
import type { Writable } from 'node:stream'

export interface Progress {
  start(label: string, total: number): void
  advance(messages: number): void
  finish(): void
}

const WIDTH = 30

export function progressBar(out: Writable & { isTTY?: boolean }): Progress {
  let label = ''
  let total = 0
  let done = 0
  let startedAt = 0
  let lastTenth = -1
  const render = () => {
    const share = total > 0 ? done / total : 1
    const rate = Math.round(done / Math.max(0.001, (Date.now() - startedAt) / 1000))
    const bar = '#'.repeat(Math.round(share * WIDTH)).padEnd(WIDTH, '.')
    return `${label} [${bar}] ${Math.floor(share * 100)}% ${done}/${total} messages, ${rate}/s`
  }
  return {
    start(l, t) {
      label = l
      total = t
      done = 0
      startedAt = Date.now()
      lastTenth = -1
      if (out.isTTY) out.write(render())
    },
    advance(n) {
      done += n
      if (out.isTTY) out.write(`\r${render()}`)
      else if (Math.floor((done / Math.max(1, total)) * 10) > lastTenth) {
        lastTenth = Math.floor((done / Math.max(1, total)) * 10)
        out.write(`${render()}\n`)
      }
    },
    finish() {
      if (out.isTTY) out.write(`\r${render()}\n`)
    },
  }
}
