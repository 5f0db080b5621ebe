import { defineConfig } from 'vitest/config';
import mutate from './vitest.mutate.config.js';

/**
 * A quicker test run for mutating the option reader, the prompts and the evidence machine
 * (`npx stryker run tests/config/stryker.focus.config.mjs`): the tests that exercise them, without the
 * slow ones that are about other files (engines, parser suites, fuzzing). A mutant this set
 * kills, the full `npm run mutate` set kills too, so its scores are a lower bound.
 */
export default defineConfig({
  ...mutate,
  // Replaced rather than merged: mergeConfig would append these to `tests/**/*.test.ts`.
  test: {
    ...mutate.test,
    include: [
      'tests/adapters.test.ts',
      'tests/arguments.test.ts',
      'tests/calling.test.ts',
      'tests/decisions.test.ts',
      'tests/durable-timers.test.ts',
      'tests/durable.test.ts',
      'tests/embedding.test.ts',
      'tests/evidence-trace.test.ts',
      'tests/evidence.test.ts',
      'tests/inspect.test.ts',
      'tests/interpreters.test.ts',
      'tests/machine-input.test.ts',
      'tests/messages.test.ts',
      'tests/prompts.test.ts',
      'tests/properties.test.ts',
      'tests/readme.test.ts',
      'tests/resilience.test.ts',
      'tests/result-types.test.ts',
      'tests/results.test.ts',
      'tests/testing.test.ts',
      'tests/typed-answers.test.ts',
      'tests/samples.test.ts',
      'tests/validator.test.ts',
      'tests/visualize.test.ts',
    ],
  },
});
