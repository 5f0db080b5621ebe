// @ts-check
/**
 * Mutation testing of the decision core: `npm run mutate` (not in CI: it takes about an hour
 * on two cores). Incremental: reports/stryker-incremental.json remembers earlier results, so
 * a rerun only tests mutants whose code or tests changed. The HTML report is written to
 * reports/mutation/mutation.html.
 *
 * Equivalent mutants (no test can tell them apart from the original), disabled in the source
 * with `// Stryker disable next-line <mutator>: <reason>`:
 *   src/parse.ts, src/json-objects.ts:
 *     src/parse.ts:48 ConditionalExpression, EqualityOperator, ArithmeticOperator — the fast-path
 *       size limit only chooses which of two paths gives the same verdict
 *     src/parse.ts:50 ConditionalExpression, BlockStatement — skipping the fast path leaves the
 *       reply to the full path, which gives the same verdict
 *     src/parse.ts:53 ConditionalExpression — declining the fast path's verdict leaves the reply
 *       to the full path, which gives the same one
 *     src/parse.ts:56 ConditionalExpression, StringLiteral — a reply without `{` gives the scan no
 *       candidate either; indexOf only settles it sooner
 *     src/parse.ts:78 ConditionalExpression — a whole-span candidate must end at the reply's end,
 *       which #wholeSpan checks; the last-character test only skips reading it
 *     src/parse.ts:84 EqualityOperator — the character at the trimmed end is whitespace or past
 *       the text, never a `{`
 *     src/parse.ts:95 ConditionalExpression — object -1 has no members and no depth, so the test
 *       after it rejects it, and -1 leaves the first rejection unset
 *     src/parse.ts:107 ConditionalExpression — no object read from a position without `{` ends
 *       where the reply ends
 *     src/parse.ts:110 ConditionalExpression — object -1 has no end, so the span test after it
 *       rejects it as well
 *     src/json-objects.ts:117 UpdateOperator, ConditionalExpression — only the first read
 *       may skip the memo; counting down, or reading through the memo on it too, gives the same ids
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
