import { defineConfig } from 'vitest/config';
import mutate from './vitest.mutate.config.js';

/**
 * A quicker test run for mutating token usage and the spans (`npx stryker run
 * tests/config/stryker.observe.config.mjs`): the tests that exercise them. tests/cli/cli-otel.test.ts is left
 * out: it spawns the CLI, which the active mutant never reaches. A mutant this set kills, the
 * full `npm run mutate` set kills too, so its scores are a lower bound.
 */
export default defineConfig({
  ...mutate,
  // Replaced rather than merged: mergeConfig would append these to `tests/**/*.test.ts`.
  test: {
    ...mutate.test,
    include: ['tests/decide/usage.test.ts', 'tests/telemetry/telemetry.test.ts', 'tests/adapters/adapters.test.ts'],
  },
});
