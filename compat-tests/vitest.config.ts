import path from 'node:path'
import { defineConfig } from 'vitest/config'

// The contract suite has its own config: one broker per run (globalSetup), no unit/integration files.
export default defineConfig({
  root: path.resolve(__dirname, '..'),
  test: {
    include: ['compat-tests/suite/**/*.test.ts'],
    globalSetup: ['compat-tests/global-setup.ts'],
    pool: 'forks',
    // One broker on a small machine: a few files at a time, tests inside a file in order.
    fileParallelism: true,
    maxWorkers: Number(process.env.COMPAT_MAX_WORKERS ?? 3),
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
  },
})
