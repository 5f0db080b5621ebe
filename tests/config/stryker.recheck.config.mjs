// @ts-check
/**
 * Re-runs the reader's mutants that its last full run (reports/reader/mutation.json) marked timed
 * out, or killed only by a test timing out: on a busy machine a slow run looks like a loop, and
 * counts as detected. Run it on a quiet machine after `npx stryker run
 * tests/config/stryker.reader.config.mjs`:
 *
 *   npx stryker run tests/config/stryker.recheck.config.mjs
 *
 * It mutates each such mutant's span (widened by a column: Stryker's ranges and its report count
 * columns differently), so mutants nested in it are run again too; reports go to reports/recheck/.
 */
import { readFileSync } from 'node:fs';
import reader from './stryker.reader.config.mjs';

/** @type {{ files: Record<string, { mutants: { status: string, statusReason?: string, location: { start: { line: number, column: number }, end: { line: number, column: number } } }[] }> }} */
const report = JSON.parse(readFileSync('reports/reader/mutation.json', 'utf8'));
const spans = new Set();
for (const [file, { mutants }] of Object.entries(report.files)) {
  for (const { status, statusReason, location: { start, end } } of mutants) {
    if (status === 'Timeout' || (status === 'Killed' && /timed out/i.test(statusReason ?? ''))) {
      spans.add(`${file}:${start.line}:${Math.max(0, start.column - 1)}-${end.line}:${end.column + 1}`);
    }
  }
}

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...reader,
  mutate: [...spans],
  incremental: false,
  htmlReporter: { fileName: 'reports/recheck/mutation.html' },
  jsonReporter: { fileName: 'reports/recheck/mutation.json' },
};
