import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sample } from '../../src/decide/attempt.js';
import { envelope } from '../fixtures/helpers.js';
import { batchFiles, booth, expectUsageErrors, dir, questionNumber, resultsIn, useProvider } from '../fixtures/booth-process.js';

/**
 * `--samples` and `--confidence-from`: each attempt gathers k replies from the endpoint,
 * they vote, and the confidence comes from the vote; bad values are bad usage, refused
 * before any call.
 */

const server = useProvider();

/** Two samples say Paris (0.9, 0.8), one says Lyon (0.6): agreement 2/3, self 0.85, hybrid 2/3 · 0.85. */
const split = () => server.provider.script.push({ text: envelope('Paris', 0.9) }, { text: envelope('Paris', 0.8) }, { text: envelope('Lyon', 0.6) });

interface Sampled {
  status: string;
  answer: string;
  confidence: number;
  agreement: number | null;
  settings: { samples: number; confidenceFrom: string };
  attempts: Array<{ samples?: Array<{ answer: string; confidence: number }>; clusters?: Array<{ answer: string; count: number }> }>;
}

describe('booth ask --samples', () => {
  it('gathers k replies per attempt, votes, and takes the confidence from --confidence-from (hybrid by default)', async () => {
    const expected: Array<[string[], string, number]> = [
      [[], 'hybrid', (2 / 3) * 0.85],
      [['--confidence-from', 'self'], 'self', 0.85],
      [['--confidence-from', 'agreement'], 'agreement', 2 / 3],
    ];
    for (const [flags, source, confidence] of expected) {
      split();
      const run = await booth(['ask', 'capital of France?', ...server.endpoint, '--samples', '3', '--threshold', '0.5', '--max-retries', '0', '--json', ...flags]);
      expect(run.stderr, source).toBe('');
      expect(run.code, source).toBe(0);
      const result = JSON.parse(run.stdout) as Sampled;
      expect(result.settings).toMatchObject({ samples: 3, confidenceFrom: source });
      expect(result).toMatchObject({ status: 'VERIFIED', answer: 'Paris', agreement: 2 / 3 });
      expect(result.confidence).toBeCloseTo(confidence, 10);
      expect(result.attempts[0]?.samples?.map((s) => s.answer).sort()).toEqual(['Lyon', 'Paris', 'Paris']);
      expect(result.attempts[0]?.clusters?.map((c) => [c.answer, c.count])).toEqual([['Paris', 2], ['Lyon', 1]]);
    }
    expect(server.provider.received).toHaveLength(9);
  }, 60_000);

  it('prints the agreement, and a refused sample as its own line', async () => {
    server.provider.script.push({ text: envelope('Paris', 0.9) }, { text: 'no JSON here' }, { text: envelope('Paris', 0.7) });
    const run = await booth(['ask', 'capital of France?', ...server.endpoint, '--samples', '3', '--max-retries', '0']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('agreement   1 (3 samples per attempt, confidence from hybrid)');
    expect(run.stdout).toMatch(/confidence {2}0\.8\d*\n/);
    expect(run.stdout).toMatch(/unparseable attempt 1 of 1, sample [123] of 3: /);
  }, 30_000);
});

describe('--samples and --confidence-from: bad values', () => {
  it('exit 2 naming the flag, the value and what is expected, before any call, in ask and in batch', async () => {
    const { input, output } = batchFiles(2);
    const cases: Array<[string[], RegExp]> = [
      [['--samples', '0'], /--samples <k>' argument '0' is invalid\. expected a whole number from 1 to 20, or an adaptive form max=K/],
      [['--samples', '21'], /--samples <k>' argument '21' is invalid\. expected a whole number from 1 to 20, or an adaptive form max=K/],
      [['--samples', '2.5'], /--samples <k>' argument '2\.5' is invalid\. expected a whole number from 1 to 20, or an adaptive form max=K/],
      [['--samples', '3', '--confidence-from', 'votes'], /--confidence-from <source>' argument 'votes' is invalid\. Allowed choices are self, agreement, hybrid\./],
      [
        ['--confidence-from', 'agreement'],
        /error: option '--confidence-from agreement' needs several samples to vote, but --samples is 1; add --samples 5 \(any of 2 to 20\), or leave --confidence-from out\./,
      ],
      [['--samples', '1', '--confidence-from', 'hybrid'], /error: option '--confidence-from hybrid' needs several samples to vote, but --samples is 1/],
    ];
    await expectUsageErrors(server.endpoint, [input, '-o', output], cases);
    expect(server.provider.received).toHaveLength(0);
  }, 120_000);

  it('--confidence-from self needs no samples: it is what one sample judges anyway', async () => {
    server.provider.script.push({ text: envelope('Paris', 0.9) });
    const run = await booth(['ask', 'capital of France?', ...server.endpoint, '--confidence-from', 'self', '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ agreement: null, settings: { samples: 1, confidenceFrom: 'self' } });
  }, 30_000);
});

describe('booth batch --samples', () => {
  it('keeps every sample, the clusters and the agreement in each result line without --with-prompts; counts refused samples', async () => {
    // Question 0: one sample of three disagrees (agreement 2/3); question 1: one sample is no JSON (agreement 2/2); question 2: all agree.
    server.provider.fallback = (body) => {
      const n = questionNumber(body);
      return { text: envelope(`answer ${n}`, 0.9) };
    };
    server.provider.script.push({ text: envelope('answer 0', 0.9) }, { text: envelope('answer 0', 0.9) }, { text: envelope('other', 0.3) });
    server.provider.script.push({ text: envelope('answer 1', 0.9) }, { text: 'no JSON here' }, { text: envelope('answer 1', 0.9) });
    const { input, output } = batchFiles(3);
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--samples', '3', '--confidence-from', 'agreement', '--concurrency', '1', '--max-retries', '0']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('failed calls 0, unparseable replies 1');
    expect(server.provider.received).toHaveLength(9);
    const lines = resultsIn(output) as unknown as Array<Sampled & { id: number; prompts?: unknown }>;
    expect(lines.map((line) => [line.id, line.status, line.agreement])).toEqual([
      [0, 'UNCERTAIN', 2 / 3],
      [1, 'VERIFIED', 1],
      [2, 'VERIFIED', 1],
    ]);
    for (const line of lines) {
      expect(line.prompts).toBeUndefined();
      expect(line.settings).toMatchObject({ samples: 3, confidenceFrom: 'agreement' });
      expect(line.attempts[0]?.samples).toHaveLength(3);
      expect(line.attempts[0]?.clusters?.[0]?.answer).toBe(`answer ${line.id}`);
    }
    // The three calls of an attempt run at once: which sample got which reply is not fixed.
    expect(lines[0]?.attempts[0]?.samples?.map((s) => `${s.answer} ${s.confidence}`).sort()).toEqual(['answer 0 0.9', 'answer 0 0.9', 'other 0.3']);
  }, 60_000);
});

describe('booth batch --samples, then booth calibrate', () => {
  it('on real result lines, the recomputed source the run used has the ECE and Brier of the run\'s own confidence', async () => {
    // Question i: samples answer "answer i" with confidence 0.9, 0.8, and "answer i" or "wrong" at 0.7 by turns; every other label is wrong.
    let call = 0;
    server.provider.fallback = (body) => {
      const n = questionNumber(body);
      call += 1;
      return { text: envelope(call % 3 === 0 && n % 2 === 0 ? 'wrong' : `answer ${n}`, [0.9, 0.8, 0.7][call % 3] ?? 0) };
    };
    const work = dir();
    const input = join(work, 'questions.jsonl');
    const output = join(work, 'results.jsonl');
    writeFileSync(input, Array.from({ length: 6 }, (_, i) => JSON.stringify({ id: i, prompt: `question ${i}`, expected: i % 3 === 0 ? 'no' : `answer ${i}` })).join('\n'));
    for (const source of ['self', 'agreement']) {
      const batch = await booth(['batch', input, '-o', output, ...server.endpoint, '--samples', '3', '--confidence-from', source, '--concurrency', '1', '--max-retries', '0']);
      expect(batch.code).toBe(0);
      const run = await booth(['calibrate', output, '--json']);
      const report = JSON.parse(run.stdout) as { count: number; ece: number; brier: number; bySource: Record<string, { count: number; ece: number; brier: number }> };
      expect(report.count, source).toBe(6);
      expect(report.bySource[source]?.count, source).toBe(6);
      expect(report.bySource[source]?.ece, source).toBeCloseTo(report.ece, 12);
      expect(report.bySource[source]?.brier, source).toBeCloseTo(report.brier, 12);
      rmSync(output);
    }
  }, 60_000);
});

/** A parsed sample, as a result line holds it. */
const said = (answer: string, confidence: number): Sample => ({
  rawText: JSON.stringify({ answer, confidence }),
  answer,
  confidence,
  parseOk: true,
  error: null,
  callFailed: false,
  ambiguous: false,
  interpretations: [],
  callTries: [],
});
const unreadable: Sample = { ...said('', 0), rawText: 'no JSON here', answer: null, confidence: null, parseOk: false, error: 'no JSON object' };
const failedCall: Sample = { ...unreadable, rawText: 'Error: 503', error: '503', callFailed: true };

/** A sampling attempt: parsed when a sample parsed, as the machine makes it; its clusters as the vote left them. */
const attempt = (samples: readonly Sample[], clusters: Array<{ answer: string; count: number; meanConfidence: number; samples: number[] }>) => ({
  answer: clusters[0]?.answer ?? null,
  parseOk: clusters.length > 0,
  callFailed: samples.every((s) => s.callFailed),
  schemaIssues: null,
  samples,
  clusters,
});

/**
 * Four results of `booth batch --samples 3` (default hybrid), labelled by "expected". The reported attempt's
 * samples give, per source (self = the winner's mean confidence, agreement = its share of the parsed samples,
 * hybrid = the two multiplied):
 *   A  Paris 0.9, Paris 0.9, Paris 0.6 → Paris, right            self 0.8  agreement 1    hybrid 0.8
 *   B  Milan 0.9, Milan 0.9, Rome 0.6  → Milan, wrong (Rome)     self 0.9  agreement 2/3  hybrid 0.6
 *   C  Berlin 0.6, Bonn 0.9, Berlin 0.6, one unreadable → Berlin, right
 *                                                               self 0.6  agreement 2/3  hybrid 0.4
 *   D  attempt 0: Lisbon 0.5, Madrid 0.5, Porto 0.5 → Lisbon (a three-way tie: the first); attempt 1: every call
 *      failed, so attempt 0 is the one reported → Lisbon, wrong   self 0.5  agreement 1/3  hybrid 1/6
 * Accuracy is 2/4 = 0.5 for every source.
 * self: every result alone in its bin, so ECE = mean |correct − confidence| = (0.2 + 0.9 + 0.4 + 0.5) / 4 = 0.5;
 *   Brier = (0.04 + 0.81 + 0.16 + 0.25) / 4 = 0.315; no threshold reaches precision 0.95 (at 0.9 only B, wrong).
 * agreement: A alone in bin 9 (|1 − 1| = 0), B and C in bin 6 (accuracy 0.5, confidence 2/3: 1/6), D in bin 3 (1/3):
 *   ECE = 0 + 2/4 · 1/6 + 1/4 · 1/3 = 1/6 = 0.1667; Brier = (0 + 4/9 + 1/9 + 1/9) / 4 = 1/6 = 0.1667;
 *   threshold 1 accepts A alone: precision 1, 25 %.
 * hybrid: each alone in its bin: ECE = (0.2 + 0.6 + 0.6 + 1/6) / 4 = 0.3917; Brier = (0.04 + 0.36 + 0.36 + 1/36) / 4
 *   = 0.1969; threshold 0.8 accepts A alone: precision 1, 25 %. It is also each line's own confidence.
 */
const sampledRows = [
  {
    id: 'A',
    expected: 'Paris',
    status: 'VERIFIED',
    answer: 'Paris',
    confidence: 0.8,
    agreement: 1,
    settings: { samples: 3, confidenceFrom: 'hybrid', schema: false },
    attempts: [attempt([said('Paris', 0.9), said('Paris', 0.9), said('Paris', 0.6)], [{ answer: 'Paris', count: 3, meanConfidence: 0.8, samples: [0, 1, 2] }])],
  },
  {
    id: 'B',
    expected: 'Rome',
    status: 'UNCERTAIN',
    answer: 'Milan',
    confidence: 0.6,
    agreement: 2 / 3,
    settings: { samples: 3, confidenceFrom: 'hybrid', schema: false },
    attempts: [
      attempt(
        [said('Milan', 0.9), said('Milan', 0.9), said('Rome', 0.6)],
        [
          { answer: 'Milan', count: 2, meanConfidence: 0.9, samples: [0, 1] },
          { answer: 'Rome', count: 1, meanConfidence: 0.6, samples: [2] },
        ],
      ),
    ],
  },
  {
    id: 'C',
    expected: 'Berlin',
    status: 'UNCERTAIN',
    answer: 'Berlin',
    confidence: 0.4,
    agreement: 2 / 3,
    settings: { samples: 4, confidenceFrom: 'hybrid', schema: false },
    attempts: [
      attempt(
        [said('Berlin', 0.6), said('Bonn', 0.9), unreadable, said('berlin.', 0.6)],
        [
          { answer: 'Berlin', count: 2, meanConfidence: 0.6, samples: [0, 3] },
          { answer: 'Bonn', count: 1, meanConfidence: 0.9, samples: [1] },
        ],
      ),
    ],
  },
  {
    id: 'D',
    expected: 'Madrid',
    status: 'UNCERTAIN',
    answer: 'Lisbon',
    confidence: 1 / 6,
    agreement: 1 / 3,
    settings: { samples: 3, confidenceFrom: 'hybrid', schema: false },
    attempts: [
      attempt(
        [said('Lisbon', 0.5), said('Madrid', 0.5), said('Porto', 0.5)],
        [
          { answer: 'Lisbon', count: 1, meanConfidence: 0.5, samples: [0] },
          { answer: 'Madrid', count: 1, meanConfidence: 0.5, samples: [1] },
          { answer: 'Porto', count: 1, meanConfidence: 0.5, samples: [2] },
        ],
      ),
      attempt([failedCall, failedCall, failedCall], []),
    ],
  },
];

const jsonl = (rows: readonly object[]) => {
  const path = join(dir(), 'results.jsonl');
  writeFileSync(path, rows.map((row) => JSON.stringify(row)).join('\n'));
  return path;
};

describe('booth calibrate: the three confidence sources on one file', () => {
  it('prints accuracy, ECE, Brier and the fitted threshold per source, recomputed from the samples', async () => {
    const run = await booth(['calibrate', jsonl(sampledRows)]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // The run's own confidence (hybrid here) keeps its section as before.
    expect(run.stdout).toContain('labelled results   4\naccuracy           0.500\nECE (10 bins)      0.3917\nBrier score        0.1969\n');
    expect(run.stdout).toContain(
      [
        'by confidence source (--confidence-from), recomputed from the samples of 4 results:',
        'source      accuracy  ECE     Brier   threshold',
        'self        0.500     0.5000  0.3150  none reaches the target',
        'agreement   0.500     0.1667  0.1667  1 reaches precision 1.000 and accepts 25.0%',
        'hybrid      0.500     0.3917  0.1969  0.8 reaches precision 1.000 and accepts 25.0%',
      ].join('\n'),
    );
  }, 30_000);

  it('--json keeps the run\'s own fields and adds bySource; without samples bySource is null and the text has no such section', async () => {
    const run = await booth(['calibrate', jsonl(sampledRows), '--json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { count: number; ece: number; brier: number; accuracy: number; bySource: Record<string, { count: number; ece: number; brier: number; accuracy: number }> };
    expect(report.count).toBe(4);
    expect(report.ece).toBeCloseTo(9.4 / 24, 10);
    const hand = { self: [0.5, 0.315], agreement: [1 / 6, 1 / 6], hybrid: [9.4 / 24, 28.36 / 144] };
    for (const [source, [ece, brier]] of Object.entries(hand)) {
      expect(report.bySource[source]?.count, source).toBe(4);
      expect(report.bySource[source]?.accuracy, source).toBe(0.5);
      expect(report.bySource[source]?.ece, source).toBeCloseTo(ece as number, 10);
      expect(report.bySource[source]?.brier, source).toBeCloseTo(brier as number, 10);
    }

    const plain = sampledRows.map(({ attempts: _attempts, settings, ...row }) => ({ ...row, settings: { ...settings, samples: 1 } }));
    const json = await booth(['calibrate', jsonl(plain), '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ count: 4, bySource: null });
    const text = await booth(['calibrate', jsonl(plain)]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('ECE (10 bins)      0.3917');
    expect(text.stdout).not.toContain('by confidence source');
  }, 30_000);

  it('a mixed file compares the sources on its lines with samples only', async () => {
    const mixed = [...sampledRows, { id: 'E', status: 'VERIFIED', confidence: 0.9, correct: true, settings: { samples: 1 } }];
    const run = await booth(['calibrate', jsonl(mixed)]);
    expect(run.stdout).toContain('labelled results   5');
    expect(run.stdout).toContain('recomputed from the samples of 4 results');
    expect(run.stdout).toContain('agreement   0.500     0.1667  0.1667');
  }, 30_000);

  it('--svg overlays one line per source, with a legend, over the run\'s own line', async () => {
    const svg = join(dir(), 'reliability.svg');
    const run = await booth(['calibrate', jsonl(sampledRows), '--svg', svg]);
    expect(run.code).toBe(0);
    const picture = readFileSync(svg, 'utf8');
    // One line mark per source, each its own colour, through that source's bins (x = 360 · confidence, y = 360 · (1 − accuracy)):
    // agreement's bins, from the arithmetic above, are (1/3, 0), (2/3, 0.5) and (1, 1).
    const series = [...picture.matchAll(/class="mark-line role-mark source_lines_marks".*?aria-label="[^"]*source: (\w+);[^"]*"[^>]*? d="([^"]*)" stroke="([^"]*)"/g)].map(
      ([, source, path, stroke]) => ({ source, path, stroke }),
    );
    expect(series.map(({ source, stroke }) => [source, stroke])).toEqual([
      ['self', '#2980b9'],
      ['agreement', '#27ae60'],
      ['hybrid', '#8e44ad'],
    ]);
    expect(series[1]?.path).toBe('M120,360L240,180L360,0');
    expect(picture.match(/class="mark-symbol role-mark source_points_marks"/g)).toHaveLength(1);
    // The legend names the three, under the flag's name; the subtitle gives each one's numbers.
    expect(picture).toContain('>confidence from</text>');
    for (const source of ['self', 'agreement', 'hybrid']) expect(picture).toContain(`>${source}</text>`);
    expect(picture).toContain('self ECE 0.500, Brier 0.315 · agreement ECE 0.167, Brier 0.167 · hybrid ECE 0.392, Brier 0.197');
    // The run's own line is still drawn, as without samples.
    expect(picture).toContain('class="mark-line role-mark reliability_line_marks"');

    const plain = join(dir(), 'plain.svg');
    await booth(['calibrate', jsonl(sampledRows.map(({ attempts: _a, ...row }) => row)), '--svg', plain]);
    const without = readFileSync(plain, 'utf8');
    expect(without).toContain('self-reported confidence');
    expect(without).not.toContain('source_lines');
    expect(without).not.toContain('confidence from');
  }, 30_000);
});
