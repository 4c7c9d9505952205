import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most of a test's time is spent waiting on real servers, processes and browsers, so two files
    // at a time pay off even on two cores, where vitest's default is one: on this project's 2-core
    // machines the suite takes ~7 minutes instead of ~11.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
