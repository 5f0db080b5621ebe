import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // A runtime's own checks run only in that runtime's config (tests/config/vitest.edge.config.ts).
    exclude: [...configDefaults.exclude, 'tests/runtimes/**'],
    reporters: ['default', './tests/config/summary-reporter.ts'],
    // The hostile-input and concurrency tests do real work on megabytes of text.
    testTimeout: 30_000,
  },
});
