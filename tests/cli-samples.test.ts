import { describe, expect, it } from 'vitest';
import { envelope } from './helpers.js';
import { batchFiles, booth, questionNumber, resultsIn, useProvider } from './fixtures/booth-process.js';

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
    expect(run.stdout).toMatch(/unparseable attempt 0, sample \d: /);
  }, 30_000);
});

describe('--samples and --confidence-from: bad values', () => {
  it('exit 2 naming the flag, the value and what is expected, before any call, in ask and in batch', async () => {
    const { input, output } = batchFiles(2);
    const cases: Array<[string[], RegExp]> = [
      [['--samples', '0'], /--samples <k>' argument '0' is invalid\. expected a whole number from 1 to 20\./],
      [['--samples', '21'], /--samples <k>' argument '21' is invalid\. expected a whole number from 1 to 20\./],
      [['--samples', '2.5'], /--samples <k>' argument '2\.5' is invalid\. expected a whole number from 1 to 20\./],
      [['--samples', '3', '--confidence-from', 'votes'], /--confidence-from <source>' argument 'votes' is invalid\. Allowed choices are self, agreement, hybrid\./],
      [
        ['--confidence-from', 'agreement'],
        /error: option '--confidence-from agreement' needs several samples to vote, but --samples is 1; add --samples 5 \(any of 2 to 20\), or leave --confidence-from out\./,
      ],
      [['--samples', '1', '--confidence-from', 'hybrid'], /error: option '--confidence-from hybrid' needs several samples to vote, but --samples is 1/],
    ];
    for (const command of [['ask', 'q'], ['batch', input, '-o', output]]) {
      for (const [flags, message] of cases) {
        const run = await booth([...command, ...server.endpoint, ...flags]);
        const label = [command[0], ...flags].join(' ');
        expect(run.code, label).toBe(2);
        expect(run.stderr, label).toMatch(message);
        expect(run.stderr, label).toMatch(/Usage: booth (ask|batch)/);
        // Said once: the usage error is not printed a second time by main().
        expect(run.stderr.split('error:').length - 1, label).toBe(1);
      }
    }
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
