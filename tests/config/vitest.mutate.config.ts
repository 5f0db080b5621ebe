import { defineConfig, mergeConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/**
 * The test run that `npm run mutate` (Stryker) uses. It leaves out the tests that spawn
 * processes or browsers, which the active mutant never reaches, and tests that only cost
 * time there (the reliability chart renders with Vega). Static mutants (in the machine's
 * definition, built at module load) run the whole of this set, so its length sets the
 * length of the run. The SIGKILL crash tests share tests/durable.test.ts with the in-process
 * durable tests, so they skip themselves when BOOTH_MUTATE is set instead of the whole
 * file being left out. Short timeouts make a mutant that loops or retries forever fail
 * fast.
 */
export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [
        'tests/browser.test.ts',
        'tests/cli.test.ts',
        'tests/cli-scripting.test.ts',
        'tests/cli-files.test.ts',
        'tests/queue-env.test.ts',
        'tests/demo.test.ts',
        'tests/concurrency.test.ts',
        'tests/load.test.ts',
        // Both engines run the same mutated code, so comparing them kills nothing.
        'tests/engines.test.ts',
        'tests/reliability-chart.test.ts',
        'tests/stately-inspect.test.ts',
      ],
      env: { BOOTH_MUTATE: '1' },
      testTimeout: 5_000,
      hookTimeout: 5_000,
    },
  }),
);
