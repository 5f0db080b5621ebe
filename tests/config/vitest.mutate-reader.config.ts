import { defineConfig } from 'vitest/config';
import mutate from './vitest.mutate.config.js';

/**
 * The reader's share of `npm run mutate`: only the tests of src/reply/parse.ts and
 * src/reply/json-objects.ts, for `npx stryker run tests/config/stryker.reader.config.mjs`. Spread rather than
 * mergeConfig, which would add this include list to the base one instead of replacing it.
 */
export default defineConfig({
  ...mutate,
  test: {
    ...mutate.test,
    include: [
      'tests/reply/parse.test.ts',
      'tests/reply/reader-regressions.test.ts',
      'tests/reply/reader-fast-path.test.ts',
      'tests/reply/differential.test.ts',
      'tests/reply/json-test-suite.test.ts',
      'tests/reply/hostile.test.ts',
      'tests/reply/json-objects.test.ts',
      'tests/api/properties.test.ts',
    ],
  },
});
