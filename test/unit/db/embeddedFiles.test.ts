import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { findAccessProblem, permits } from '../../../src/db/embedded/access.js'
import { readPostmasterPid } from '../../../src/db/embedded/postmaster.js'

const made: string[] = []
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

describe('permits', () => {
  const file = { mode: 0o750, uid: 10, gid: 20 }
  it('uses owner, then group, then other bits', () => {
    expect(permits(file, { uid: 10, gid: 99 }, 0o5)).toBe(true)
    expect(permits(file, { uid: 11, gid: 20 }, 0o5)).toBe(true)
    expect(permits(file, { uid: 11, gid: 20 }, 0o2)).toBe(false)
    expect(permits(file, { uid: 11, gid: 21 }, 0o1)).toBe(false)
    expect(permits(file, {}, 0o1)).toBe(false) // a user that does not exist yet gets "other"
    expect(permits({ mode: 0o755, uid: 0, gid: 0 }, {}, 0o5)).toBe(true)
  })
})

describe('findAccessProblem', () => {
  it('names the first directory another user cannot enter', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'pgq-acc-'))
    made.push(root)
    chmodSync(root, 0o755)
    const inner = path.join(root, 'private')
    mkdirSync(path.join(inner, 'bin'), { recursive: true })
    writeFileSync(path.join(inner, 'bin', 'postgres'), '')
    chmodSync(path.join(inner, 'bin', 'postgres'), 0o755)
    const stranger = { uid: 4_000_000, gid: 4_000_000 }
    chmodSync(inner, 0o700)
    expect(findAccessProblem(path.join(inner, 'bin', 'postgres'), stranger, 0o4)).toMatch(/private \(mode 700\) cannot be entered/)
    chmodSync(inner, 0o755)
    expect(findAccessProblem(path.join(inner, 'bin', 'postgres'), stranger, 0o4)).toBeUndefined()
    chmodSync(path.join(inner, 'bin', 'postgres'), 0o700)
    expect(findAccessProblem(path.join(inner, 'bin', 'postgres'), stranger, 0o4)).toMatch(/postgres \(mode 700\) is not accessible/)
  })
})

describe('readPostmasterPid', () => {
  it('reads pid (line 1) and port (line 4)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pgq-pid-'))
    made.push(dir)
    expect(readPostmasterPid(dir)).toBeUndefined()
    writeFileSync(path.join(dir, 'postmaster.pid'), '4242\n/data\n1700000000\n55432\n\n127.0.0.1\n  1234  5678\nready   \n')
    expect(readPostmasterPid(dir)).toEqual({ pid: 4242, port: 55432 })
    writeFileSync(path.join(dir, 'postmaster.pid'), 'garbage')
    expect(readPostmasterPid(dir)).toBeUndefined()
  })
})
