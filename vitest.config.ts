import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    reporters: ['default', './tests/config/summary-reporter.ts'],
    // The hostile-input and concurrency tests do real work on megabytes of text.
    testTimeout: 30_000,
  },
});
