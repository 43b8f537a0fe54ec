// The load test: 8 producer and 8 consumer processes for LOAD_SECONDS (default 15: the CI form); a long run is
// `LOAD_SECONDS=600 npm run test:load`. Run with `npm run test:load`.
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const root = fileURLToPath(new URL('../..', import.meta.url))
const seconds = Number(process.env.LOAD_SECONDS ?? 15)

export default defineConfig({
  root,
  test: {
    name: 'load',
    root,
    include: ['test/load/**/*.test.ts'],
    globalSetup: ['test/setup/globalPg.ts'],
    testTimeout: seconds * 1000 + 180_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.cache/loadtest.report.json' }]] : ['default'],
  },
})
