// @ts-check
import base from './stryker.config.mjs';

/** machines/checkpoint.ts alone, judged by the tests that exercise it. */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutate-machine.config.ts', related: false },
  mutate: ['machines/checkpoint.ts'],
  incrementalFile: 'reports/machine-incremental.json',
  htmlReporter: { fileName: 'reports/machine/mutation.html' },
  jsonReporter: { fileName: 'reports/machine/mutation.json' },
  concurrency: 1,
};
