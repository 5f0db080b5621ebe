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
 *     src/reply/json-objects.ts:69 ArrayDeclaration, BooleanLiteral — a value left out of LONELY_VALUES
 *       (or all of them) is kept in a member set instead, which reads the same
 *     src/reply/json-objects.ts:120, 154, 159 StringLiteral, ArrayDeclaration, BooleanLiteral — the
 *       fields' first values: `reset` sets the text and empties the member sets before any read (and
 *       neither text holds a `"` or `}` for a read to find), sets are found by the index `push`
 *       returns, and every string read sets #escaped before #chosenKey reads it
 *     src/reply/json-objects.ts:185, 188, 191 ConditionalExpression, EqualityOperator, ArithmeticOperator
 *       — whether `reset` lets a grown table go only trades memory for allocations
 *     src/reply/json-objects.ts:225 BlockStatement — as its ConditionalExpression: `{}` read like any
 *       other object gets the same row
 *     src/reply/json-objects.ts:252 LogicalOperator — at row 0 the row before reads as undefined and
 *       `undefined >= i` is false; past it, searching more often finds the same row
 *     src/reply/json-objects.ts:279 BlockStatement — member sets no row names, left unused: only memory
 *     src/reply/json-objects.ts:320 ConditionalExpression, EqualityOperator — a cursor `forget` leaves past
 *       the last row is pulled back by #known's check of the row before it
 *     src/reply/json-objects.ts:356 MethodExpression — a memo page longer than the text costs only memory
 *     src/reply/json-objects.ts:370 ConditionalExpression, EqualityOperator, AssignmentOperator — whether a
 *       table doubles or takes room for every container the text holds, it has room for the next row
 *     src/reply/json-objects.ts:424, 461, 480, 551, 606, 617 ArithmeticOperator — the field offsets
 *       FRAME_ID, NOTE_LEVEL and START are 0, so adding or subtracting them is alike
 *     src/reply/json-objects.ts:440, 539 BooleanLiteral — a string value, or a key, decoded into #scalar
 *       needlessly: a string value never reads it, and #chosenKey decodes a key afresh before reading it
 *     src/reply/json-objects.ts:495, 497, 503 BlockStatement — a lone member's code only saves memory: the
 *       member set #keep makes instead holds the same member
 *     src/reply/json-objects.ts:589 LogicalOperator — a scalar decoded when not kept, or from a failed
 *       read, is never read
 *     src/reply/json-objects.ts:646, 649 (countOpeners) — the count only sizes a large table's growth,
 *       which never falls below doubling it
 *     src/reply/json-objects.ts:656 ArrayDeclaration — a string left in freezeDeep's list freezes as
 *       itself and holds nothing more to freeze
 *
 *   Left as survivors, not disabled: equivalent, but a killed mutant of the same mutator shares their
 *   line, so a disable comment would hide it too. In src/reply/json-objects.ts: comparisons with values
 *   that never occur (an id, end, index, key end or number end that is never 0, `>=` for `>` against
 *   #loneKey's -LONE_STRINGS, `<=` for `<` where the text's end reads as NaN, numberEnd's `j >= 0` where
 *   charCodeAt(-1) is NaN), a field offset of 0 added or subtracted, decodes that need not happen
 *   (#chosenKey's #escaped test, #readString's `kept` and escape test, #readScalar's `end >= 0 && kept`,
 *   #decode's `kept` for a scalar), failures caught one step later (#decode's and isObjectText's
 *   `i < 0` after a value or key), `{}` sent through the full read (read()'s `emptyEnd`), row -1's
 *   undefined fields (#readAt's `count > 0`, #noteOf's `row >= 0`), the binary search that never moves
 *   or never runs (it returns row 0, and the walk after it finds the row), the walk's `row < count`
 *   (it stops at the last row, whose start is at or after i), `forget`'s pop of the last member set
 *   skipped (memory only) or made on an empty list, lone-member codes not used (#keep's tests),
 *   stringEnd's `c > Backslash` shortcut, arrays opened back to back given a row each, freezeDeep
 *   walking arrays as objects (JSON.parse's arrays have no other keys), reading one past an array's end
 *   (undefined) or pushing null (it holds nothing). Not equivalent, and left: #failOpen's `id >= 0` as
 *   `id > 0` (object 0 fails open in the memo only after `forget(0)`), and the object a read starts at
 *   marked in the memo even without `again` (#close's `frame > 0`, the memo rebuilt on every read that
 *   finds nothing): a later read there then returns the id it had instead of taking a new row, which
 *   only saves rows; and #grown's `table.length * row`, which grows tables far faster than needed and
 *   fails to allocate only on a reply of millions of objects.
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
