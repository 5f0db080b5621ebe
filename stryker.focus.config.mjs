// @ts-check
/**
 * A focused run of stryker.config.mjs for the option reader, the prompts and the evidence
 * machine: `npx stryker run stryker.focus.config.mjs` takes minutes rather than hours. Its
 * test run (vitest.mutate-focus.config.ts) is a subset of the full one, so a mutant that
 * survives here may still be killed by `npm run mutate`; the scores that count are that
 * command's. Results go to reports/focus-incremental.json and reports/mutation/.
 */
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { ...base.vitest, configFile: 'vitest.mutate-focus.config.ts' },
  mutate: ['src/options.ts', 'src/prompts.ts', 'machines/evidence.ts'],
  incrementalFile: 'reports/focus-incremental.json',
  concurrency: 1,
};
