// @ts-check
/**
 * Mutation testing of the decision core, the settings every run shares. `npm run mutate`
 * (not in CI) runs it in four parts, each file judged by the tests that exercise it:
 * tests/config/stryker.machine.config.mjs (machines/checkpoint/), tests/config/stryker.reader.config.mjs
 * (src/reply/parse.ts, src/reply/json-objects.ts), tests/config/stryker.focus.config.mjs (src/api/options.ts,
 * src/decide/prompts.ts, machines/evidence.ts) and tests/config/stryker.observe.config.mjs (src/decide/usage.ts,
 * src/telemetry/). With the whole suite behind every mutant, the
 * static ones (the machine's definition, built at load) alone took hours on two cores.
 * Each part keeps incremental results in reports/, so a rerun tests only mutants whose code
 * or tests changed; its HTML and JSON reports go to reports/ too.
 *
 * Equivalent mutants (no test can tell them apart from the original), disabled in the source
 * with `// Stryker disable next-line <mutator>: <reason>`:
 *   machines/checkpoint/:
 *     CALL_TIMEOUT, BACKOFF, 'deadline' StringLiteral — timer ids are names: any distinct three behave alike
 *     setup({ types }) ObjectLiteral — types exist for TypeScript alone
 *     awaitingVerdict: false BooleanLiteral — read only in validationGate, which sets it on entry
 *   src/options/read-options.ts, closest() MethodExpression — toUpperCase instead of toLowerCase folds both names alike, same distances
 *   machines/evidence.ts:71 ObjectLiteral — `types` is read by TypeScript only, not at run time
 *   machines/evidence.ts:84,86 OptionalChaining — isVerdict/isScore run only in scoreGate, where the score is set
 *   machines/evidence.ts:89,95 OptionalChaining, ConditionalExpression — agrees/meetsThreshold run only after
 *     isVerdict/isScore hold, so the kind test is always true there
 *   machines/evidence.ts:92,98 BooleanLiteral — the `: false` fallbacks of those two guards are unreachable
 *   machines/evidence.ts:111 OptionalChaining — block runs from scoreGate, where the score is set
 *   machines/evidence.ts:176 OptionalChaining, ConditionalExpression — only an invalid score reaches that transition
 *
 *   src/reply/parse.ts, src/reply/json-objects.ts:
 *     src/reply/parse.ts:52 ConditionalExpression, EqualityOperator, ArithmeticOperator — the fast-path
 *       size limit only chooses which of two paths gives the same verdict
 *     src/reply/parse.ts:54 ConditionalExpression, BlockStatement — skipping the fast path leaves the
 *       reply to the full path, which gives the same verdict
 *     src/reply/parse.ts:57 ConditionalExpression — declining the fast path's verdict leaves the reply
 *       to the full path, which gives the same one
 *     src/reply/parse.ts:60 ConditionalExpression, StringLiteral — a reply without `{` gives the scan no
 *       candidate either; indexOf only settles it sooner
 *     src/reply/parse.ts:84 ConditionalExpression — a whole-span candidate must end at the reply's end,
 *       which #wholeSpan checks; the last-character test only skips reading it
 *     src/reply/parse.ts:90 EqualityOperator — the character at the trimmed end is whitespace or past
 *       the text, never a `{`
 *     src/reply/parse.ts:104 ConditionalExpression — object -1 has no members and no depth, so the test
 *       after it rejects it, and -1 leaves the first rejection unset
 *     src/reply/parse.ts:118 ConditionalExpression — no object read from a position without `{` ends
 *       where the reply ends
 *     src/reply/parse.ts:122 ConditionalExpression — object -1 has no end, so the span test after it
 *       rejects it as well
 *     src/reply/parse.ts Candidates' initial field values (StringLiteral, BooleanLiteral, UnaryOperator)
 *       and find()'s cleanup strings — each is set before it is read
 *     src/reply/parse.ts whole-span read's `again` BooleanLiteral — a failed read there is read afresh
 *       by the scan and fails alike
 *     src/reply/parse.ts jsonFences `info + 4` ArithmeticOperator — the four characters before the tag
 *       are backticks or blanks, never a `{`
 *     src/reply/json-objects.ts #firstRowFrom's loop ConditionalExpression — a search that never runs
 *       returns row 0, and #known's walk reaches the same row
 *     src/reply/json-objects.ts #memoize's page list ArrayDeclaration — an empty list gets its pages as
 *       they are set
 *     src/reply/json-objects.ts stringEnd's `escaped = false` BooleanLiteral — an escape-free string
 *       decoded by JSON.parse is its slice
 *
 *   Left as survivors, not disabled (the 91.1 % once measured for src/reply/json-objects.ts is stale:
 *   a full run on the reader of issue 24 gave 80.7 %, see its item 14): mutants of
 *   the JSON scanner that change only its speed, each reaching the same verdict — the memo
 *   skipped or ignored (its fill, the slot reads in #decode, #failOpen's marks), values decoded
 *   that need not be (`kept`, the #escaped compare), early exits removed (a `{` followed by
 *   neither `"` nor `}`, `c > Backslash`), a failed read that a later read repeats, the
 *   field offset START, which is 0, added or subtracted, and the reader's memory savings
 *   undone (parse.ts's call of `forget` and its body, `read`'s `again` and what it marks,
 *   the object a read starts at left out of the memo, the level #failOpen starts at, the
 *   bound #grown takes for large tables, the memo's page size, arrays opened back to back
 *   given a row each instead of sharing one). Not rerun since those savings: the score
 *   above is older.
 */

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'tests/config/vitest.mutate.config.ts', related: false },
  mutate: [
    'machines/checkpoint/*.ts',
    'machines/evidence.ts',
    'src/reply/parse.ts',
    'src/reply/json-objects.ts',
    'src/api/options.ts',
    'src/options/read-options.ts',
    'src/options/machine-input.ts',
    'src/decide/prompts.ts',
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
