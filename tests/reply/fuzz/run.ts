/**
 * The long run of the differential test: `npm run fuzz -- --cases 1000000 [--seed N]`.
 * Prints how many replies were compared, how they were judged, and the first
 * disagreement (shrunk by fast-check) if there is one; exits 1 then.
 */
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { differences, oracle } from './compare.js';
import { reply } from './replies.js';

const { values } = parseArgs({ options: { cases: { type: 'string', default: '100000' }, seed: { type: 'string' } } });
const cases = Number(values.cases);
if (!Number.isInteger(cases) || cases < 1) {
  console.error(`--cases must be a whole number of replies, got ${JSON.stringify(values.cases)}`);
  process.exit(2);
}
const seed = values.seed === undefined ? Date.now() : Number(values.seed);
const verdicts = new Map<string, number>();
const started = performance.now();
const report = fc.check(
  fc.property(reply, (text) => {
    const verdict = oracle(text);
    const kind = verdict.parseOk ? 'accepted' : `rejected: ${verdict.why}`;
    verdicts.set(kind, (verdicts.get(kind) ?? 0) + 1);
    const found = differences(text);
    if (found.length > 0) throw new Error(`${JSON.stringify(text)}\n${found.join('\n')}`);
  }),
  { numRuns: cases, seed },
);
const seconds = (performance.now() - started) / 1000;
console.log(`${report.numRuns.toLocaleString('en')} replies compared with the JSON.parse oracle in ${seconds.toFixed(0)} s (seed ${seed})`);
for (const [kind, count] of [...verdicts].sort((a, b) => b[1] - a[1])) console.log(`  ${kind.padEnd(30)} ${count}`);
if (report.failed) {
  console.error(fc.defaultReportMessage(report));
  process.exit(1);
}
console.log('0 disagreements');
