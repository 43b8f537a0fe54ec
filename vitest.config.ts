import { defineConfig } from 'vitest/config'

// One fast-check seed for the whole run, inherited by every worker (test/setup/fastCheck.ts): FC_SEED replays a run.
process.env.FC_SEED ||= String(Math.floor(Math.random() * 2 ** 31))
const runsMultiplier = Math.max(1, Number(process.env.FC_RUNS_MULTIPLIER) || 1)
console.log(`fast-check seed: FC_SEED=${process.env.FC_SEED}${process.env.FC_RUNS_MULTIPLIER ? ` (runs x${process.env.FC_RUNS_MULTIPLIER})` : ''}`)

// Two projects: `unit` never touches a database; `integration` shares one PostgreSQL (resolved once in
// the global setup) and isolates each test file in its own schema, so files run in parallel.
// Workers: vitest's default is one per core minus one, i.e. ONE on a 2-core machine, and an integration file spends
// most of its time waiting (on PostgreSQL, child processes, timers: the suite used a third of one core), so four
// run side by side (docs/testing.md has the measurements). VITEST_MAX_WORKERS overrides.
export default defineConfig({
  test: {
    maxWorkers: Number(process.env.VITEST_MAX_WORKERS) || 4,
    // CI keeps a machine-readable report for its closing summary line
    reporters: process.env.CI ? ['default', ['json', { outputFile: process.env.VITEST_REPORT ?? '.cache/vitest.report.json' }]] : ['default'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // no database, no module-level state a file leaves behind (mocks are restored, fake timers reset): one
          // module graph per worker instead of one per file. Loading src/ again for each of ~50 files was three
          // quarters of the project's CPU time (docs/testing.md); --isolate overrides for a suspected leak.
          isolate: false,
          setupFiles: ['test/setup/fastCheck.ts', 'test/setup/cpuReport.ts'],
          // a bound that catches a hang, not a timing assertion: a property of 2,000 runs on a loaded 2-core machine
          // with four workers took more than vitest's default 5 s, and four properties of 1-2 s each took more than
          // 30 s on this machine shared with four other suites (docs/testing.md)
          testTimeout: 120_000 * runsMultiplier,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/setup/globalPg.ts'],
          setupFiles: ['test/setup/fastCheck.ts', 'test/setup/cpuReport.ts'],
          testTimeout: 30_000 * runsMultiplier,
          hookTimeout: 30_000,
          fileParallelism: true,
        },
      },
    ],
  },
})
