import { defineConfig } from 'vitest/config';
import mutate from './vitest.mutate.config.js';

/** The tests that judge machines/checkpoint/, for a Stryker run over that file alone. */
export default defineConfig({
  ...mutate,
  test: {
    ...mutate.test,
    include: [
      'tests/machines/decisions.test.ts',
      'tests/machines/model-based.test.ts',
      'tests/api/resilience.test.ts',
      'tests/stores/durable.test.ts',
      'tests/stores/durable-timers.test.ts',
      'tests/engine/interpreters.test.ts',
      'tests/api/calling.test.ts',
      'tests/api/validator.test.ts',
      'tests/machines/embedding.test.ts',
      'tests/machines/machine-input.test.ts',
      'tests/results/results.test.ts',
      'tests/engine/inspect.test.ts',
      'tests/decide/messages.test.ts',
      'tests/visualize/visualize.test.ts',
      'tests/engine/loading.test.ts',
      'tests/api/typed-answers.test.ts',
      'tests/api/samples.test.ts',
      // The clarification state and its guards: the library, the stored runs, the trace.
      'tests/api/clarify.test.ts',
      'tests/api/clarified-trace.test.ts',
      'tests/stores/checkpoint-trust.test.ts',
      // Cascades, adaptive samples and budgets: the stopping rules and the runs that spend.
      'tests/api/spend.test.ts',
      'tests/decide/stopping-rules.test.ts',
    ],
  },
});
