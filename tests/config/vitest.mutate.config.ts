import { defineConfig, mergeConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/**
 * The test run that `npm run mutate` (Stryker) uses. It leaves out the tests that spawn
 * processes or browsers, which the active mutant never reaches, and tests that only cost
 * time there (the reliability chart renders with Vega). Static mutants (in the machine's
 * definition, built at module load) run the whole of this set, so its length sets the
 * length of the run. The SIGKILL crash tests share tests/stores/durable.test.ts with the in-process
 * durable tests, so they skip themselves when BOOTH_MUTATE is set instead of the whole
 * file being left out. Short timeouts make a mutant that loops or retries forever fail
 * fast.
 */
export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [
        'tests/visualize/browser.test.ts',
        'tests/cli/cli.test.ts',
        'tests/cli/cli-scripting.test.ts',
        'tests/cli/cli-files.test.ts',
        'tests/cli/queue-env.test.ts',
        'tests/cli/demo.test.ts',
        'tests/api/concurrency.test.ts',
        'tests/api/load.test.ts',
        // Both engines run the same mutated code, so comparing them kills nothing.
        'tests/engine/engines.test.ts',
        'tests/cli/reliability-chart.test.ts',
        'tests/engine/stately-inspect.test.ts',
        // These run dist/ (in other runtimes, bundles, a page), which mutants never reach.
        'tests/runtimes/**',
        'tests/portable/**',
        'tests/examples/**',
        'tests/size-budget.test.ts',
      ],
      env: { BOOTH_MUTATE: '1' },
      testTimeout: 5_000,
      hookTimeout: 5_000,
    },
  }),
);
