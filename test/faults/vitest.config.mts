// The fault suite: real PostgreSQL, child processes, injected failures. Not part of the default run (it restarts
// servers of its own and kills processes); run with `npm run test:faults`.
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const root = fileURLToPath(new URL('../..', import.meta.url))

export default defineConfig({
  root,
  test: {
    name: 'faults',
    root,
    include: ['test/faults/**/*.test.ts'],
    globalSetup: ['test/setup/globalPg.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // scenarios time sessions and leases on 2 cores: one file at a time keeps their timings honest
    fileParallelism: false,
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.cache/faults.report.json' }]] : ['default'],
  },
})
