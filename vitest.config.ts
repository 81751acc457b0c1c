import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests start real servers; on two cores they run one file at a time.
    fileParallelism: false,
    pool: 'forks',
    // A skopt crawl runs the whole page pipeline (extract, chunk, embed ~700 chunks on two cores).
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
