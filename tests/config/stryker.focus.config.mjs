// @ts-check
/**
 * Part of `npm run mutate`: the option reader, the prompts, the vote and the evidence machine, judged
 * by the tests in tests/config/vitest.mutate-focus.config.ts. Results go to reports/focus-incremental.json
 * and reports/mutation/.
 */
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { ...base.vitest, configFile: 'tests/config/vitest.mutate-focus.config.ts' },
  mutate: ['src/api/options.ts', 'src/options/read-options.ts', 'src/options/machine-input.ts', 'src/decide/prompts.ts', 'src/decide/agreement.ts', 'src/decide/sampling.ts', 'machines/evidence.ts'],
  incrementalFile: 'reports/focus-incremental.json',
};
