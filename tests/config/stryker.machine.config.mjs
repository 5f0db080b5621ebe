// @ts-check
import base from './stryker.config.mjs';

/** Part of `npm run mutate`: machines/checkpoint/, judged by the tests that exercise it. */
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'tests/config/vitest.mutate-machine.config.ts', related: false },
  mutate: ['machines/checkpoint/*.ts'],
  incrementalFile: 'reports/machine-incremental.json',
  htmlReporter: { fileName: 'reports/machine/mutation.html' },
  jsonReporter: { fileName: 'reports/machine/mutation.json' },
};
