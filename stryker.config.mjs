// @ts-check
/**
 * Mutation testing of the decision core: `npm run mutate` (not in CI: it takes about an hour
 * on two cores). Incremental: reports/stryker-incremental.json remembers earlier results, so
 * a rerun only tests mutants whose code or tests changed. The HTML report is written to
 * reports/mutation/mutation.html.
 *
 * Equivalent mutants (no test can tell them apart from the original), disabled in the source
 * with `// Stryker disable next-line <mutator>: <reason>`:
 *   machines/checkpoint.ts:
 *     CALL_TIMEOUT, BACKOFF, 'deadline' StringLiteral — timer ids are names: any distinct three behave alike
 *     setup({ types }) ObjectLiteral — types exist for TypeScript alone
 *     awaitingVerdict: false BooleanLiteral — read only in validationGate, which sets it on entry
 *   src/options.ts:229 MethodExpression — toUpperCase instead of toLowerCase folds both names alike, same distances
 *   machines/evidence.ts:71 ObjectLiteral — `types` is read by TypeScript only, not at run time
 *   machines/evidence.ts:84,86 OptionalChaining — isVerdict/isScore run only in scoreGate, where the score is set
 *   machines/evidence.ts:89,95 OptionalChaining, ConditionalExpression — agrees/meetsThreshold run only after
 *     isVerdict/isScore hold, so the kind test is always true there
 *   machines/evidence.ts:92,98 BooleanLiteral — the `: false` fallbacks of those two guards are unreachable
 *   machines/evidence.ts:111 OptionalChaining — block runs from scoreGate, where the score is set
 *   machines/evidence.ts:176 OptionalChaining, ConditionalExpression — only an invalid score reaches that transition
 *
 * A quicker run for three of these files: stryker.focus.config.mjs.
 */

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  mutate: [
    'machines/checkpoint.ts',
    'machines/evidence.ts',
    'src/parse.ts',
    'src/json-objects.ts',
    'src/options.ts',
    'src/prompts.ts',
  ],
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  concurrency: 2,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  thresholds: { high: 90, low: 80, break: null },
};
