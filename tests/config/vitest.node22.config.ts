import { defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/**
 * The portable core tests on Node 22 (`npm run test:node22`), started with the binary that
 * tests/runtimes/node22 installs from the npm registry; vitest's workers run on the same.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['tests/portable/**/*.test.ts'],
    setupFiles: ['tests/runtimes/node22/on-node-22.ts'],
  },
});
