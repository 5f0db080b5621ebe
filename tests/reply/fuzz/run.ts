/**
 * The long run of the differential test: `npm run fuzz -- --cases 1000000 [--seed N]`.
 * Prints how many replies were compared, how they were judged, and the first
 * disagreement (shrunk by fast-check) if there is one; exits 1 then.
 *
 * `--stream` runs the streaming reader's differential instead (stream-compare.ts): each
 * reply fed in eight chunkings under three rules, against the finished text. It also counts
 * the replies whose early verdict — ambiguity and readings complete in the leading object,
 * which ends a stream as AMBIGUOUS — is not what parseReply reads in the finished text.
 */
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { differences, oracle } from './compare.js';
import { reply } from './replies.js';
import { feed, streamDifferences } from './stream-compare.js';
import { parseReply } from '../../../src/reply/parse.js';

const { values } = parseArgs({ options: { cases: { type: 'string', default: '100000' }, seed: { type: 'string' }, stream: { type: 'boolean', default: false } } });
const cases = Number(values.cases);
if (!Number.isInteger(cases) || cases < 1) {
  console.error(`--cases must be a whole number of replies, got ${JSON.stringify(values.cases)}`);
  process.exit(2);
}
const seed = values.seed === undefined ? Date.now() : Number(values.seed);
const verdicts = new Map<string, number>();
const started = performance.now();
let compared = 0;
const report = fc.check(
  fc.property(reply, (text) => {
    if (values.stream) {
      const { fields } = feed(text, []);
      const whole = parseReply(text);
      const lead = fields.leadEnd >= 0 ? 'leading object read to its end' : fields.ambiguous !== null || fields.interpretations !== null || fields.answerSoFar !== null ? 'leading object stopped, some members told' : 'nothing told early';
      verdicts.set(lead, (verdicts.get(lead) ?? 0) + 1);
      if (fields.ambiguous === true && fields.interpretations !== null) {
        const finished = whole.ok && whole.ambiguous ? 'early AMBIGUOUS, finished text AMBIGUOUS too' : `early AMBIGUOUS, finished text ${whole.ok ? 'not ambiguous' : 'unreadable'}`;
        verdicts.set(finished, (verdicts.get(finished) ?? 0) + 1);
      }
      const found = streamDifferences(text, { seed: seed + compared++ });
      if (found.length > 0) throw new Error(`${JSON.stringify(text)}\n${found.slice(0, 10).join('\n')}`);
      return;
    }
    const verdict = oracle(text);
    const kind = verdict.parseOk ? 'accepted' : `rejected: ${verdict.why}`;
    verdicts.set(kind, (verdicts.get(kind) ?? 0) + 1);
    const found = differences(text);
    if (found.length > 0) throw new Error(`${JSON.stringify(text)}\n${found.join('\n')}`);
  }),
  { numRuns: cases, seed },
);
const seconds = (performance.now() - started) / 1000;
const against = values.stream ? 'streamed in eight chunkings under three rules, compared with the finished text' : 'compared with the JSON.parse oracle';
console.log(`${report.numRuns.toLocaleString('en')} replies ${against} in ${seconds.toFixed(0)} s (seed ${seed})`);
for (const [kind, count] of [...verdicts].sort((a, b) => b[1] - a[1])) console.log(`  ${kind.padEnd(values.stream ? 60 : 30)} ${count}`);
if (report.failed) {
  console.error(fc.defaultReportMessage(report));
  process.exit(1);
}
console.log('0 disagreements');
