// Whether the postgres uid (the server runs as it when we are root) can reach the binaries and the data directory.
import { constants as fsc, existsSync, promises as fs, statSync } from 'node:fs'
import path from 'node:path'
import type { Binaries, Who } from './process.js'

interface ModeOwner {
  mode: number
  uid: number
  gid: number
}

/** Whether `who` has every bit of `need` (0o4 read, 0o1 search/execute) on a file with this mode and owner. */
export function permits(st: ModeOwner, who: Who, need: number): boolean {
  const bits = st.uid === who.uid ? (st.mode >> 6) & 7 : st.gid === who.gid ? (st.mode >> 3) & 7 : st.mode & 7
  return (bits & need) === need
}

/** First path (target or an ancestor directory) that `who` cannot use, with the reason; undefined when all is well. */
export function findAccessProblem(target: string, who: Who, need: number): string | undefined {
  const abs = path.resolve(target)
  const chain: string[] = []
  for (let dir = path.dirname(abs); ; dir = path.dirname(dir)) {
    chain.unshift(dir)
    if (dir === path.dirname(dir)) break
  }
  for (const dir of chain) {
    const st = statSync(dir)
    if (!permits(st, who, 0o1)) return `${dir} (mode ${(st.mode & 0o777).toString(8)}) cannot be entered`
  }
  const st = statSync(abs)
  if (!permits(st, who, need)) return `${abs} (mode ${(st.mode & 0o777).toString(8)}) is not accessible`
  return undefined
}

export function assertAccessible(target: string, who: Who, need: number, what: string): void {
  const problem = findAccessProblem(target, who, need)
  if (problem) {
    throw new Error(
      `embedded PostgreSQL runs as the postgres user (uid ${who.uid ?? 'to be created'}), which cannot reach ${what}: ${problem}. ` +
        'Make the path world-readable/searchable (e.g. chmod o+rx on the directories) or use DATABASE_URL.',
    )
  }
}

/**
 * The binaries run as the postgres uid; if that uid cannot read them the spawn fails with EACCES and an
 * unhelpful message. Check first and say what is wrong.
 */
export async function checkBinaries(bins: Binaries, who: Who, asRoot: boolean): Promise<void> {
  const native = path.dirname(path.dirname(bins.postgres))
  const targets: [string, number][] = [
    [bins.postgres, 0o4],
    [bins.initdb, 0o4],
    [path.join(native, 'lib'), 0o5],
    [path.join(native, 'share'), 0o5],
  ]
  for (const [target, need] of targets) {
    if (!existsSync(target)) continue
    if (asRoot) assertAccessible(target, who, need, `its binaries in ${native}`)
    else await fs.access(target, fsc.R_OK)
  }
}
