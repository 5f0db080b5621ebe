import { defineConfig } from 'vitest/config';
import mutate from './vitest.mutate.config.js';

/**
 * The reader's share of `npm run mutate`: only the tests of src/parse.ts and
 * src/json-objects.ts, for `npx stryker run tests/config/stryker.reader.config.mjs`. Spread rather than
 * mergeConfig, which would add this include list to the base one instead of replacing it.
 */
export default defineConfig({
  ...mutate,
  test: {
    ...mutate.test,
    include: [
      'tests/parse.test.ts',
      'tests/reader-regressions.test.ts',
      'tests/reader-fast-path.test.ts',
      'tests/differential.test.ts',
      'tests/json-test-suite.test.ts',
      'tests/hostile.test.ts',
      'tests/properties.test.ts',
    ],
  },
});
