import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { calibrate } from '../../src/cli/calibrate.js';
import { askSpentLines } from '../../src/cli/spent.js';
import { check, type UsageReport } from '../../src/index.js';
import { envelope } from '../fixtures/helpers.js';
import { batchFiles, booth, dir, linesIn, questionNumber, useProvider } from '../fixtures/booth-process.js';

const server = useProvider();

/** A provider that answers each question with the number in it: "question 7" → "answer 7". */
const answerByNumber = (delayMs = 0, usage?: null) => (body: Record<string, unknown>) => {
  const n = questionNumber(body);
  return { text: envelope(`answer ${n}`, n % 10 === 0 ? 0.2 : 0.9), delayMs, usage };
};

describe('booth demo', () => {
  it('runs the offline main job, the same as npm run demo', async () => {
    const run = await booth(['demo']);
    expect(run.code).toBe(0);
    for (const status of ['VERIFIED', 'REPAIRED', 'AMBIGUOUS', 'UNCERTAIN', 'BLOCKED']) expect(run.stdout).toContain(`status      ${status}`);
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);
});

describe('booth ask', () => {
  it('checks one question against the endpoint and prints status, answer, confidence and path', async () => {
    server.provider.script.push({ text: envelope('Paris', 0.4) }, { text: envelope('Paris', 0.95) });
    const run = await booth(['ask', 'What is the capital of France?', ...server.endpoint]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('status      REPAIRED');
    expect(run.stdout).toContain('answer      Paris');
    expect(run.stdout).toContain('confidence  0.95');
    expect(run.stdout).toContain('path        calling → parsing → ambiguityGate → confidenceGate → reconsidering → calling');
  }, 30_000);

  it('--json prints result.toJSON(); --html writes the trace page; --api-key-env sends the key', async () => {
    const out = join(dir(), 'trace.html');
    server.provider.script.push({ text: envelope('4', 0.9) });
    const run = await booth(['ask', '2 + 2?', ...server.endpoint, '--json', '--html', out, '--api-key-env', 'BOOTH_TEST_KEY']);
    expect(run.code).toBe(2); // the variable is not set
    expect(run.stderr).toContain('$BOOTH_TEST_KEY is not set');
    process.env['BOOTH_TEST_KEY'] = 'sk-from-env';
    try {
      const ok = await booth(['ask', '2 + 2?', ...server.endpoint, '--json', '--html', out, '--api-key-env', 'BOOTH_TEST_KEY']);
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({ status: 'VERIFIED', answer: '4', ok: true, method: 'confidence' });
      expect(readFileSync(out, 'utf8')).toContain('>VERIFIED</h1>');
      expect(server.provider.received.at(-1)?.headers['authorization']).toBe('Bearer sk-from-env');
    } finally {
      delete process.env['BOOTH_TEST_KEY'];
    }
  }, 30_000);

  it('invalid flags exit with code 2 and a usage message', async () => {
    for (const args of [
      ['ask', 'q', ...server.endpoint, '--threshold', '2'],
      ['ask', 'q', '--model', 'm'],
      ['ask', 'q', ...server.endpoint, '--max-retries', '-1'],
      ['batch', 'in.jsonl', ...server.endpoint],
      ['frobnicate'],
    ]) {
      const run = await booth(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(/error: /);
      expect(run.stderr).toMatch(/Usage: booth/);
    }
  }, 60_000);
});

describe('booth batch', () => {
  it('checks 1 000 questions with a progress bar, appends results as JSONL and prints a summary', async () => {
    server.provider.fallback = answerByNumber();
    const work = dir();
    const input = join(work, 'questions.jsonl');
    const output = join(work, 'results.jsonl');
    const lines = Array.from({ length: 1_000 }, (_, i) => JSON.stringify({ id: i, prompt: `question ${i}` }));
    lines.splice(500, 0, '{"id": "broken", "prompt": 5}', 'not json at all');
    writeFileSync(input, `${lines.join('\n')}\n`);

    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--concurrency', '8', '--max-retries', '0']);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`warning: ${input}:501: needs a string or number "id" and a string "prompt"; skipped`);
    expect(run.stderr).toContain(`warning: ${input}:502: not JSON; skipped`);
    expect(run.stderr).toMatch(/booth batch \|.*\| 1000\/1000 \| [\d.]+\/s \| ETA .* \| VERIFIED 900 UNCERTAIN 100/);
    expect(run.stderr).toMatch(/\| 0\/1000 \|/);
    const results = readFileSync(output, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(results).toHaveLength(1_000);
    expect(new Set(results.map((r) => r.id)).size).toBe(1_000);
    for (const r of results) expect(r.answer).toBe(`answer ${r.id}`);
    expect(run.stdout).toContain('questions 1000, already done 0, checked now 1000');
    expect(run.stdout).toMatch(/VERIFIED\s+900\s+90\.0%/);
    expect(run.stdout).toMatch(/UNCERTAIN\s+100\s+10\.0%/);
    expect(run.stdout).toMatch(/mean attempts 1\.00, latency p50 \d+ ms, p95 \d+ ms/);
  }, 120_000);

  it('a killed run resumes by skipping the ids already written', async () => {
    server.provider.fallback = answerByNumber(20);
    const { input, output } = batchFiles(120, (i) => `q${i}`);
    const killed = await booth(['batch', input, '-o', output, ...server.endpoint, '--concurrency', '4'], (child) => {
      if (linesIn(output) >= 30) child.kill('SIGKILL');
    });
    expect(killed.signal).toBe('SIGKILL');
    const before = linesIn(output);
    expect(before).toBeLessThan(120);
    const requestsBefore = server.provider.received.length;

    const resumed = await booth(['batch', input, '-o', output, ...server.endpoint, '--concurrency', '4']);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`questions 120, already done ${before}`);
    const ids = readFileSync(output, 'utf8').trim().split('\n').map((l) => JSON.parse(l).id);
    expect(ids).toHaveLength(120);
    expect(new Set(ids).size).toBe(120);
    // Only the questions not yet written were asked again (each reconsidered once when its confidence was low).
    const asked = new Set(server.provider.received.slice(requestsBefore).map((r) => /question (\d+)/.exec(JSON.stringify(r.body))?.[1]));
    expect(asked.size).toBe(120 - before);
  }, 60_000);

  it('Ctrl-C stops cleanly: written results stay whole, exit code 130', async () => {
    server.provider.fallback = answerByNumber(50);
    const { input, output } = batchFiles(200);
    let sent = false;
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--concurrency', '2'], (child) => {
      if (!sent && linesIn(output) >= 5) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    const { code, stderr, stdout } = run;
    expect(code).toBe(130);
    expect(stderr).toMatch(/stopped: \d+ results written/);
    expect(stdout).toContain('questions 200');
    const lines = readFileSync(output, 'utf8').trim().split('\n');
    expect(lines.length).toBeLessThan(200);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  }, 60_000);
});

/**
 * A result line as `booth batch` writes it with its default settings (a rerun with others is
 * refused), of a check whose every call reported `usage`.
 */
function resultLine(id: number, replies: readonly string[], usage: UsageReport): string {
  let call = 0;
  const result = check(
    (_p, info) => {
      info.reportUsage?.(usage);
      return replies[call++] ?? '';
    },
    `question ${id}`,
    { maxRetries: 1 },
  );
  return JSON.stringify({ id, latencyMs: 5, ...result.toJSON() });
}

describe('usage and time', () => {
  /** The endpoint's replies with no `usage`: nothing to report. */
  const unbilled = (text: string) => ({ text, usage: null });
  const billed = (text: string) => ({ text, usage: { prompt_tokens: 1_200, completion_tokens: 34, total_tokens: 1_234 } });

  it('ask prints how long the check took, and nothing about tokens when the endpoint reported no usage', async () => {
    server.provider.script.push(unbilled(envelope('Paris', 0.4)), unbilled(envelope('Paris', 0.95)));
    const run = await booth(['ask', 'What is the capital of France?', ...server.endpoint]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^attempts    2 \(confidence\)\nduration    \d+ ms\npath /m);
    expect(run.stdout).not.toMatch(/tokens/);
  }, 30_000);

  it('ask --json has the usage and durationMs of the result and of each attempt, as the endpoint counted them', async () => {
    server.provider.script.push(billed(envelope('Paris', 0.4)), unbilled(envelope('Paris', 0.95)));
    const run = await booth(['ask', 'What is the capital of France?', ...server.endpoint, '--json']);
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout) as { usage: unknown; durationMs: number; attempts: Array<{ usage: unknown; durationMs: number }> };
    const counted = { inputTokens: 1_200, outputTokens: 34, totalTokens: 1_234, costUsd: null };
    expect(json.usage).toEqual(counted);
    // The second reply counted nothing: unknown, so null, never zeros.
    expect(json.attempts.map((attempt) => attempt.usage)).toEqual([counted, null]);
    for (const attempt of json.attempts) expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
    expect(json.durationMs).toBe(json.attempts.reduce((sum, a) => sum + a.durationMs, 0));
  }, 30_000);

  it('ask prints the tokens the endpoint counted: in, out and total', async () => {
    server.provider.script.push(billed(envelope('Paris', 0.4)), billed(envelope('Paris', 0.95)));
    const run = await booth(['ask', 'What is the capital of France?', ...server.endpoint]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^duration    \d+ ms\ntokens      2,400 in \/ 68 out \/ 2,468 total\n/m);
  }, 30_000);

  it('ask\'s tokens line gives the cost when a call reported one', () => {
    const result = check((_p, info) => (info.reportUsage?.({ inputTokens: 1_234, outputTokens: 56, costUsd: 0.0042 }), envelope('Paris', 0.9)), 'q');
    const [duration, tokens] = askSpentLines(result);
    expect(duration).toBe(`duration    ${result.durationMs} ms`);
    expect(tokens).toBe('tokens      1,234 in / 56 out / 1,290 total, cost $0.0042');
    expect(askSpentLines(check(() => envelope('Paris', 0.9), 'q'))).toHaveLength(1);
  });

  it('a resumed batch\'s summary counts the tokens of the earlier run\'s result lines, and per accepted answer', async () => {
    server.provider.fallback = answerByNumber(0, null);
    const { input, output } = batchFiles(4);
    const each = { inputTokens: 100, outputTokens: 20, costUsd: 0.001 };
    writeFileSync(
      output,
      [
        resultLine(0, [envelope('a', 0.9)], each), // VERIFIED, one call
        resultLine(1, [envelope('b', 0.3), envelope('b', 0.9)], each), // REPAIRED, two calls
        resultLine(2, [envelope('c', 0.3), envelope('c', 0.3)], each), // UNCERTAIN, two calls
      ].join('\n') + '\n',
    );
    const run = await booth(['batch', input, '-o', output, ...server.endpoint]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('questions 4, already done 3, checked now 1');
    // Question 3, checked now, reported none: its tokens are unknown, so the share is over the three that did.
    expect(run.stdout).toContain('tokens 500 in / 100 out / 600 total, cost $0.005 (usage reported by 3 of 4 results)\n');
    expect(run.stdout).toContain('tokens per accepted answer 300 (2 accepted among those)\n');
  }, 30_000);

  it('a batch summary prints the tokens when every result reported usage, and nothing about them when none did', async () => {
    const { input, output } = batchFiles(3);
    const usage = { inputTokens: 1_000, outputTokens: 500, totalTokens: 1_600 };
    writeFileSync(output, [0, 1, 2].map((id) => resultLine(id, [envelope('a', id === 2 ? 0.3 : 0.9)], usage)).join('\n'));
    const done = await booth(['batch', input, '-o', output, ...server.endpoint]);
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('nothing left to check');
    // Lines 0 and 1 were accepted at the first call; line 2 was asked twice (--max-retries 1).
    expect(done.stdout).toMatch(/p95 \d+ ms\ntokens 4,000 in \/ 2,000 out \/ 6,400 total\ntokens per accepted answer 3,200 \(2 accepted\)\n$/);
    expect(server.provider.received).toHaveLength(0);

    const none = batchFiles(3);
    writeFileSync(none.output, [0, 1, 2].map((id) => resultLine(id, [envelope('a', 0.3)], usage)).join('\n'));
    const rejected = await booth(['batch', none.input, '-o', none.output, ...server.endpoint]);
    expect(rejected.stdout).toContain('tokens per accepted answer — (none accepted)');

    server.provider.fallback = answerByNumber(0, null);
    const unknown = batchFiles(3);
    const fresh = await booth(['batch', unknown.input, '-o', unknown.output, ...server.endpoint]);
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toContain('checked now 3');
    expect(fresh.stdout).not.toMatch(/tokens/);
  }, 30_000);
});

describe('booth calibrate', () => {
  // Five labelled results. By hand: bin 9 holds 0.9 (right), 0.9 (wrong), 1.0 (right): confidence 0.9333,
  // accuracy 0.6667; bin 3 holds 0.3 (right), 0.35 (wrong): confidence 0.325, accuracy 0.5.
  // ECE = 3/5 · 0.26667 + 2/5 · 0.175 = 0.23. Brier = (0.01 + 0.81 + 0 + 0.49 + 0.1225) / 5 = 0.2865.
  // Precision ≥ 0.9 first holds at threshold 1.0 (1 of 1), accepting 20% of the answers.
  const rows = [
    { status: 'VERIFIED', confidence: 0.9, answer: 'Paris.', expected: 'paris' },
    { status: 'VERIFIED', confidence: 0.9, answer: 'Lyon', expected: 'Paris' },
    { status: 'VERIFIED', confidence: 1.0, correct: true },
    { status: 'UNCERTAIN', confidence: 0.3, correct: true },
    { status: 'UNCERTAIN', confidence: 0.35, correct: false },
    { status: 'UNCERTAIN', confidence: null, correct: true },
    { status: 'VERIFIED', confidence: 0.8 },
  ];

  it('computes ECE, Brier, accuracy per status and the fitted threshold, and draws the reliability diagram', async () => {
    const work = dir();
    const file = join(work, 'results.jsonl');
    const svg = join(work, 'reliability.svg');
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n'));
    const run = await booth(['calibrate', file, '--target-precision', '0.9', '--svg', svg]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('labelled results   5');
    expect(run.stdout).toContain('ECE (10 bins)      0.2300');
    expect(run.stdout).toContain('Brier score        0.2865');
    expect(run.stdout).toContain('accuracy VERIFIED  0.667 of 3');
    expect(run.stdout).toContain('accuracy UNCERTAIN 0.500 of 2');
    expect(run.stdout).toContain('threshold          1 reaches precision 1.000 (target 0.9) and accepts 20.0% of answers');
    const picture = readFileSync(svg, 'utf8');
    expect(picture.startsWith('<svg')).toBe(true);
    expect(picture).toContain('Reliability: ECE 0.230, Brier 0.287, n = 5');
    expect(picture).toContain('self-reported confidence');
  }, 30_000);

  it('prints the fitted threshold rounded, as a reader reads it; --json keeps it whole', async () => {
    // A confidence with arithmetic's tail, as a vote's mean can leave one.
    const noisy = [
      { status: 'VERIFIED', confidence: 0.9499999999999998, correct: true },
      { status: 'VERIFIED', confidence: 0.9499999999999998, correct: true },
      { status: 'UNCERTAIN', confidence: 0.4, correct: false },
    ];
    const file = join(dir(), 'noisy.jsonl');
    writeFileSync(file, noisy.map((r) => JSON.stringify(r)).join('\n'));
    const run = await booth(['calibrate', file, '--target-precision', '0.9']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('threshold          0.95 reaches precision 1.000 (target 0.9) and accepts 66.7% of answers');
    expect(run.stdout).not.toContain('0.9499999999999998');
    const json = await booth(['calibrate', file, '--target-precision', '0.9', '--json']);
    expect((JSON.parse(json.stdout) as { threshold: { value: number } }).threshold.value).toBe(0.9499999999999998);
  }, 30_000);

  it('typed answers (batch --schema) match their expected value as JSON, whatever the order of the keys', async () => {
    const typed = [
      { status: 'VERIFIED', confidence: 0.9, answer: { city: 'Tokyo', population: 1 }, expected: { population: 1, city: 'Tokyo' } },
      { status: 'VERIFIED', confidence: 0.9, answer: { city: 'Osaka' }, expected: { city: 'Tokyo' } },
      { status: 'UNCERTAIN', confidence: 0.2, answer: [1, 2], expected: [1, 2] },
      { status: 'UNCERTAIN', confidence: 0.2, answer: null, expected: 42 },
    ];
    const file = join(dir(), 'typed.jsonl');
    writeFileSync(file, typed.map((r) => JSON.stringify(r)).join('\n'));
    const run = await booth(['calibrate', file]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('labelled results   4');
    expect(run.stdout).toContain('accuracy VERIFIED  0.500 of 2');
    expect(run.stdout).toContain('accuracy UNCERTAIN 0.500 of 2');
  }, 30_000);

  it('without vega and vega-lite installed, --svg exits 1 naming the command that installs them; the numbers alone still work', async () => {
    const work = dir();
    const file = join(work, 'results.jsonl');
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n'));
    const hook = new URL('../fixtures/without-vega.mjs', import.meta.url).href;
    const env = { ...process.env, NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import ${hook}`.trim() };
    const svg = join(work, 'reliability.svg');
    const drawn = await booth(['calibrate', file, '--svg', svg], undefined, env);
    expect(drawn.code).toBe(1);
    expect(drawn.stderr).toContain(
      'error: booth calibrate --svg draws its chart with vega and vega-lite, optional peer dependencies of boothjs, and `vega` is not installed. Install them with: npm i vega vega-lite',
    );
    expect(drawn.stdout).toBe('');
    expect(existsSync(svg)).toBe(false);
    const numbers = await booth(['calibrate', file, '--target-precision', '0.9'], undefined, env);
    expect(numbers.code).toBe(0);
    expect(numbers.stdout).toContain('ECE (10 bins)      0.2300');
  }, 30_000);

  it('the numbers come from calibrate(), bin by bin', () => {
    const report = calibrate(
      [
        { status: 'VERIFIED', confidence: 0.9, correct: true },
        { status: 'VERIFIED', confidence: 0.9, correct: false },
        { status: 'VERIFIED', confidence: 1, correct: true },
        { status: 'UNCERTAIN', confidence: 0.3, correct: true },
        { status: 'UNCERTAIN', confidence: 0.35, correct: false },
      ],
      0.9,
    );
    expect(report.bins[9]).toMatchObject({ count: 3, accuracy: 2 / 3 });
    expect(report.bins[9]?.meanConfidence).toBeCloseTo(2.8 / 3, 10);
    expect(report.bins[3]).toMatchObject({ count: 2, accuracy: 0.5 });
    expect(report.ece).toBeCloseTo(0.23, 10);
    expect(report.brier).toBeCloseTo(0.2865, 10);
    expect(report.threshold).toEqual({ value: 1, precision: 1, coverage: 0.2 });
    expect(calibrate(report.bins.length ? [{ status: 'X', confidence: 0.5, correct: false }] : [], 0.9).threshold).toBeNull();
  });
});
