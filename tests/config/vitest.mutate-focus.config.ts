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
      'tests/adapters/adapters.test.ts',
      'tests/api/arguments.test.ts',
      'tests/api/calling.test.ts',
      'tests/machines/decisions.test.ts',
      'tests/stores/durable-timers.test.ts',
      'tests/stores/durable.test.ts',
      'tests/machines/embedding.test.ts',
      'tests/machines/evidence-trace.test.ts',
      'tests/machines/evidence.test.ts',
      'tests/engine/inspect.test.ts',
      'tests/engine/interpreters.test.ts',
      'tests/machines/machine-input.test.ts',
      'tests/decide/messages.test.ts',
      'tests/decide/prompts.test.ts',
      'tests/api/properties.test.ts',
      'tests/readme.test.ts',
      'tests/api/resilience.test.ts',
      'tests/results/result-types.test.ts',
      'tests/results/results.test.ts',
      'tests/testing/testing.test.ts',
      'tests/api/typed-answers.test.ts',
      'tests/api/samples.test.ts',
      'tests/api/validator.test.ts',
      'tests/visualize/visualize.test.ts',
    ],
  },
});
