// Command line of `npm run bench`: --quick, --only <scenario>[,<scenario>], --backend pgqueue|kafka, --repeat <n>.

export type Backend = 'pgqueue' | 'kafka'
export const BACKENDS: readonly Backend[] = ['pgqueue', 'kafka']
// latency first: the bulk scenarios leave autovacuum and checkpoint work behind that would land in its tail
export const SCENARIOS = ['latency', 'produce', 'consume', 'fanout', 'parallel', 'footprint', 'transactions', 'scaling'] as const
export type Scenario = (typeof SCENARIOS)[number]

export interface BenchArgs {
  quick: boolean
  scenarios: Scenario[]
  backends: Backend[]
  /** keep the schema (pgqueue) after the run, for inspection */
  keep: boolean
  /** runs of each scenario (backends alternating); the table shows the median run */
  repeat: number
}

const USAGE = `usage: npm run bench -- [--quick] [--only <${SCENARIOS.join('|')}>[,...]] [--backend pgqueue|kafka] [--repeat <n>] [--keep]`

export function parseArgs(argv: string[]): BenchArgs {
  let quick = false
  let keep = false
  let repeat = 1
  const only: Scenario[] = []
  const backends: Backend[] = []
  const value = (i: number, name: string) => {
    const v = argv[i]
    if (v === undefined || v.startsWith('--')) throw new Error(`${name} needs a value\n${USAGE}`)
    return v
  }
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined]
    switch (flag) {
      case '--quick':
        quick = true
        break
      case '--keep':
        keep = true
        break
      case '--repeat':
        repeat = Number(inline ?? value(++i, '--repeat'))
        if (!Number.isInteger(repeat) || repeat < 1 || repeat > 20) throw new Error(`--repeat needs a count from 1 to 20\n${USAGE}`)
        break
      case '--only':
        for (const s of (inline ?? value(++i, '--only')).split(',')) {
          if (!(SCENARIOS as readonly string[]).includes(s)) throw new Error(`unknown scenario "${s}"\n${USAGE}`)
          only.push(s as Scenario)
        }
        break
      case '--backend':
        for (const b of (inline ?? value(++i, '--backend')).split(',')) {
          if (!(BACKENDS as readonly string[]).includes(b)) throw new Error(`unknown backend "${b}"\n${USAGE}`)
          backends.push(b as Backend)
        }
        break
      case '--help':
      case '-h':
        console.log(USAGE)
        process.exit(0)
        break
      default:
        throw new Error(`unknown argument ${argv[i]}\n${USAGE}`)
    }
  }
  return {
    quick,
    keep,
    repeat,
    scenarios: only.length > 0 ? SCENARIOS.filter((s) => only.includes(s)) : [...SCENARIOS],
    backends: backends.length > 0 ? BACKENDS.filter((b) => backends.includes(b)) : [...BACKENDS],
  }
}
