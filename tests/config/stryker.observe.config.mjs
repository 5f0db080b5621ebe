// @ts-check
/**
 * Part of `npm run mutate`: token usage (src/decide/usage.ts) and the OpenTelemetry spans
 * (src/telemetry/), judged by the tests in tests/config/vitest.mutate-observe.config.ts:
 * `npx stryker run tests/config/stryker.observe.config.mjs`. Everything else as in tests/config/stryker.config.mjs;
 * its own incremental file and reports under reports/observe/.
 *
 * Left as survivors, not disabled (equivalent: no test can tell them apart):
 *   src/decide/usage.ts:
 *     31, 37, 47, 48 `typeof … === 'number'` → true — Number.isSafeInteger and Number.isFinite
 *       are false for anything that is not a number
 *     45 the object test of isUsage — its one caller (readCheckpoint) never passes null or
 *       undefined, and a primitive has no counts, so isUsage is false for it either way
 *     59 `a.costUsd === null`, `b.costUsd === null` → false — null + cost is the cost
 *   src/telemetry/settings.ts:
 *     89 `typeof functionId === 'string'` → true — sets `booth.function_id: undefined`, which
 *       OpenTelemetry's Attributes admit and SDKs drop
 *     126 `if (loaded)` → false — require's cache returns the same module
 *     the OptionalChaining of openTelemetryApi's require — require throws Errors, never null
 *   src/telemetry/run-telemetry.ts:
 *     44 #attemptIndex -1 → +1 — the first trace step (attempt 0) differs from both, and
 *       nothing reads the index before it
 *     58 the stand-in check span → {} — it exists only when the tracer threw, and a broken run
 *       reads nothing of it
 *     81, 87 `sample === undefined` → false — the maps are keyed by sample numbers only
 *     148 `context.status === null` → true — readCheckpoint resumes only unfinished runs
 *     165, 221 `context.attempt === this.#attemptIndex`, `open === undefined` → true — every
 *       sample of an attempt is opened, so #sampleUsage already holds every index a later
 *       attempt's slots could open
 *     166 `this.#attempt !== null` → true — #endAttempt returns at once when none is open
 *     173 the evidence-agreement test, three ways — evidenceAgreement is non-null exactly when
 *       settings is null (checkWithEvidence)
 *     208, 221, 225 (#endAttempt's and #observeSamples' sample tests) — every slot is done before
 *       its attempt commits, and the interpreter observes after every change, so #endAttempt finds
 *       no sample span open, the attempt is always committed, and a done slot always has its reply
 *   (Line numbers as of the split of #25; the list was made against the file they came from.)
 */
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { ...base.vitest, configFile: 'tests/config/vitest.mutate-observe.config.ts' },
  mutate: ['src/decide/usage.ts', 'src/telemetry/settings.ts', 'src/telemetry/run-telemetry.ts'],
  incrementalFile: 'reports/observe-incremental.json',
  htmlReporter: { fileName: 'reports/observe/mutation.html' },
  jsonReporter: { fileName: 'reports/observe/mutation.json' },
};
