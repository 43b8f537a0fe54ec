// The console's browser tests: the ops server on a real schema, driven in Debian's headless Chromium (apt-get
// install chromium; no browser download). Not part of the default run; `npm run test:console` (CI runs it).
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const root = fileURLToPath(new URL('../..', import.meta.url))

export default defineConfig({
  root,
  test: {
    name: 'console',
    root,
    include: ['test/console/**/*.test.ts'],
    globalSetup: ['test/setup/globalPg.ts', 'test/console/buildSetup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // one browser at a time on a shared 2-core machine
    fileParallelism: false,
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.cache/console.report.json' }]] : ['default'],
  },
})
