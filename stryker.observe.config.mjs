// @ts-check
/**
 * Part of `npm run mutate`: token usage (src/usage.ts) and the OpenTelemetry spans
 * (src/telemetry.ts), judged by the tests in vitest.mutate-observe.config.ts:
 * `npx stryker run stryker.observe.config.mjs`. Everything else as in stryker.config.mjs;
 * its own incremental file and reports under reports/observe/.
 */
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { ...base.vitest, configFile: 'vitest.mutate-observe.config.ts' },
  mutate: ['src/usage.ts', 'src/telemetry.ts'],
  incrementalFile: 'reports/observe-incremental.json',
  htmlReporter: { fileName: 'reports/observe/mutation.html' },
  jsonReporter: { fileName: 'reports/observe/mutation.json' },
};
