import { defineConfig } from 'vitest/config'

// One fast-check seed for the whole run, inherited by every worker (test/setup/fastCheck.ts): FC_SEED replays a run.
process.env.FC_SEED ||= String(Math.floor(Math.random() * 2 ** 31))
console.log(`fast-check seed: FC_SEED=${process.env.FC_SEED}${process.env.FC_RUNS_MULTIPLIER ? ` (runs x${process.env.FC_RUNS_MULTIPLIER})` : ''}`)

// Two projects: `unit` never touches a database; `integration` shares one PostgreSQL (resolved once in
// the global setup) and isolates each test file in its own schema, so files run in parallel.
export default defineConfig({
  test: {
    // CI keeps a machine-readable report for its closing summary line
    reporters: process.env.CI ? ['default', ['json', { outputFile: process.env.VITEST_REPORT ?? '.cache/vitest.report.json' }]] : ['default'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          setupFiles: ['test/setup/fastCheck.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/setup/globalPg.ts'],
          setupFiles: ['test/setup/fastCheck.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
          fileParallelism: true,
        },
      },
    ],
  },
})
