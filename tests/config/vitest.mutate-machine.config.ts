import { defineConfig } from 'vitest/config';
import mutate from './vitest.mutate.config.js';

/** The tests that judge machines/checkpoint.ts, for a Stryker run over that file alone. */
export default defineConfig({
  ...mutate,
  test: {
    ...mutate.test,
    include: [
      'tests/decisions.test.ts',
      'tests/model-based.test.ts',
      'tests/resilience.test.ts',
      'tests/durable.test.ts',
      'tests/durable-timers.test.ts',
      'tests/interpreters.test.ts',
      'tests/calling.test.ts',
      'tests/validator.test.ts',
      'tests/embedding.test.ts',
      'tests/machine-input.test.ts',
      'tests/results.test.ts',
      'tests/inspect.test.ts',
      'tests/messages.test.ts',
      'tests/visualize.test.ts',
      'tests/loading.test.ts',
      'tests/typed-answers.test.ts',
      'tests/samples.test.ts',
    ],
  },
});
