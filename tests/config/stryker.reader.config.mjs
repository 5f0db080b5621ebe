// @ts-check
/**
 * Mutation testing of the reply reader alone (src/reply/parse.ts, src/reply/json-objects.ts) against
 * its own tests: `npx stryker run tests/config/stryker.reader.config.mjs`. Everything else as in
 * tests/config/stryker.config.mjs; its own incremental file and reports under reports/reader/.
 */
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  mutate: ['src/reply/parse.ts', 'src/reply/json-objects.ts'],
  incrementalFile: 'reports/reader-incremental.json',
  htmlReporter: { fileName: 'reports/reader/mutation.html' },
  jsonReporter: { fileName: 'reports/reader/mutation.json' },
  vitest: { configFile: 'tests/config/vitest.mutate-reader.config.ts', related: false },
};
