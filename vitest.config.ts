import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // The edge runtime's own checks run only in its config (tests/config/vitest.edge.config.ts).
    exclude: [...configDefaults.exclude, 'tests/runtimes/edge/**'],
    reporters: ['default', './tests/config/summary-reporter.ts'],
    // The hostile-input and concurrency tests do real work on megabytes of text.
    testTimeout: 30_000,
  },
});
