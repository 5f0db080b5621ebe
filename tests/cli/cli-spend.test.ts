import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { envelope } from '../fixtures/helpers.js';
import { batchFiles, booth, expectUsageErrors, linesIn, questionNumber, resultsIn, spawnBooth, useProvider } from '../fixtures/booth-process.js';
import { startProvider } from '../fixtures/provider-server.js';
import { type RedisServer, startRedis } from '../fixtures/redis-server.js';

/**
 * Issue 30 at the command line, real processes against loopback providers: a cascade of
 * models (--escalate-model, --escalate-base-url), adaptive samples (--samples max=K,…), a
 * budget per question (--max-calls, --max-tokens, --max-cost-usd) and a batch's
 * --total-budget-usd. The providers see which model each request names, and which requests
 * the command gave up on (their connection closed before the reply).
 */

const server = useProvider();

/** A second endpoint, for the escalations to another base URL. */
const second = { provider: undefined as unknown as Awaited<ReturnType<typeof startProvider>> };
beforeAll(async () => {
  second.provider = await startProvider();
});
afterAll(() => second.provider.close());
beforeEach(() => {
  second.provider.script.length = 0;
  second.provider.received.length = 0;
  second.provider.aborted.length = 0;
  second.provider.fallback = null;
});

const base = () => `${server.provider.url}/v1`;
const secondBase = () => `${second.provider.url}/v1`;
/** The model each request named, in order. */
const modelsAsked = (provider: { received: Array<{ body: Record<string, unknown> }> }) => provider.received.map((r) => r.body['model']);
/** Replies by the model asked: `small` unsure, `big` sure. */
const bySize = (body: Record<string, unknown>) => ({ text: envelope(body['model'] === 'big' ? 'Paris' : 'Lyon', body['model'] === 'big' ? 0.95 : 0.3) });

interface Line {
  id: number;
  status: string;
  method: string;
  answer: unknown;
  model?: string | null;
  detail?: string | null;
  reason?: string | null;
  usage: { costUsd: number | null } | null;
  run: { model: string; host: string; escalate?: Array<{ model: string; host: string }> };
  attempts: Array<{ model?: string | null; samples?: Array<{ answer: unknown; skipped?: boolean }> }>;
  escalations?: Array<{ attempt: number; model: string | null }>;
}

describe('bad spend flags: exit 2 naming the flag, the value and the fix, before any call', () => {
  it('in ask and in batch', async () => {
    const { input, output } = batchFiles(2);
    const cases: Array<[string[], RegExp]> = [
      [['--max-calls', '0'], /option '--max-calls <n>' argument '0' is invalid\. expected a whole number, 1 or more\./],
      [['--max-calls', 'three'], /option '--max-calls <n>' argument 'three' is invalid\. expected a whole number, 1 or more\./],
      [['--max-tokens', '1.5'], /option '--max-tokens <n>' argument '1\.5' is invalid\. expected a whole number, 1 or more\./],
      [['--max-cost-usd', '$0.05'], /option '--max-cost-usd <usd>' argument '\$0\.05' is invalid\. expected a number of US dollars above 0, such as 0\.05 \(no \$ sign\)\./],
      [['--max-cost-usd', '0'], /option '--max-cost-usd <usd>' argument '0' is invalid\. expected a number of US dollars above 0/],
      [['--samples', '2.5'], /option '--samples <k>' argument '2\.5' is invalid\. expected a whole number from 1 to 20, or an adaptive form max=K\[,min=M\]\[,stop=decided\|C\]/],
      [['--samples', 'max=1'], /option '--samples <k>' argument 'max=1' is invalid\. expected max to be a whole number from 2 to 20, got "1"\./],
      [['--samples', 'max=5,min=6'], /argument 'max=5,min=6' is invalid\. expected min to be a whole number from 1 to 5, got "6"\./],
      [['--samples', 'max=5,stop=0.4'], /argument 'max=5,stop=0\.4' is invalid\. expected stop=decided .* or stop=C, a number above 0\.5 and below 1 such as 0\.95, got "0\.4"\./],
      [['--samples', 'min=2'], /argument 'min=2' is invalid\. expected max=K \(2 to 20\) in the adaptive form/],
      [['--samples', 'max=5,most=3'], /argument 'max=5,most=3' is invalid\. expected max=K\[,min=M\]\[,stop=decided\|C\]: "most=3" is none of max, min, stop\./],
      [['--price', 'test-model=cheap'], /option '--price <\[model=\]in,out>' argument 'test-model=cheap' is invalid\. expected MODEL=IN,OUT \(or IN,OUT for --model\)/],
      [['--price', 'gpt-4o=1,2'], /error: option '--price' names "gpt-4o", which this command does not ask \("test-model"\): give the name as --model or --escalate-model has it\./],
      [['--max-cost-usd', '0.05'], /error: option '--max-cost-usd <usd>' needs the price of every model asked, .*; give --price for "test-model", such as --price 0\.15,0\.60/],
      [['--escalate-model', 'big', '--max-cost-usd', '0.05', '--price', '1,2'], /needs the price of every model asked, .*; give --price for "big", such as --price big=0\.15,0\.60/],
      // Every model missing a price, each with the flag that prices it.
      [['--escalate-model', 'big', '--max-cost-usd', '0.05'], /give --price for "test-model", "big", such as --price 0\.15,0\.60 --price big=0\.15,0\.60 \(/],
      [['--escalate-model', 'a', '--escalate-model', 'b', '--escalate-base-url', 'http://127.0.0.1:9/v1'], /error: give one --escalate-base-url per --escalate-model, in the same order \(2 --escalate-model, 1 --escalate-base-url\)/],
      [['--escalate-model', 'big', '--escalate-api-key-env', 'KEY'], /error: option '--escalate-api-key-env' goes with --escalate-base-url/],
      [['--escalate-base-url', 'localhost:8080/v1'], /error: option '--escalate-base-url <url>' is invalid: Expected `baseURL` to start with http:\/\/ or https:\/\//],
      [['--escalate-model', 'test-model'], /error: the cascade asks "test-model" at 127\.0\.0\.1:\d+ twice \(model 1 and model 2\)/],
    ];
    await expectUsageErrors(server.endpoint, [input, '-o', output], cases);
    expect(server.provider.received).toHaveLength(0);
  }, 240_000);

  it('--total-budget-usd: a bad value, one without prices, and with --queue', async () => {
    const { input, output } = batchFiles(2);
    const cases: Array<[string[], RegExp]> = [
      [['--total-budget-usd', '-1', ...server.endpoint], /option '--total-budget-usd <usd>' argument '-1' is invalid\. expected a number of US dollars above 0/],
      [['--total-budget-usd', '1', ...server.endpoint], /error: option '--total-budget-usd <usd>' needs the price of every model asked/],
      [['--total-budget-usd', '1', '--queue', 'redis://127.0.0.1:9/0', '--name', 'r'], /error: option '--total-budget-usd' goes without --queue/],
    ];
    for (const [flags, message] of cases) {
      const run = await booth(['batch', input, '-o', output, ...flags]);
      expect(run.code, flags.join(' ')).toBe(2);
      expect(run.stderr, flags.join(' ')).toMatch(message);
    }
    expect(linesIn(output)).toBe(0);
  }, 60_000);

  it('a key variable of an escalation that is not set', async () => {
    const env = { ...process.env };
    delete env['BOOTH_TEST_UNSET_KEY'];
    const run = await booth(
      ['ask', 'q', ...server.endpoint, '--escalate-model', 'big', '--escalate-base-url', secondBase(), '--escalate-api-key-env', 'BOOTH_TEST_UNSET_KEY'],
      undefined,
      env,
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('error: $BOOTH_TEST_UNSET_KEY is not set');
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);
});

describe('booth batch --total-budget-usd', () => {
  /** Each reply reports 1 000 tokens in and 100 out: at --price 1,2 a call costs $0.0012. */
  const priced = (body: Record<string, unknown>) => ({ text: envelope(`answer ${questionNumber(body)}`, 0.9), usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 } });

  it('starts no question once this run\'s calls have cost the budget: the lines written are kept, the rest not started, exit 4; the same command goes on', async () => {
    server.provider.fallback = priced;
    const { input, output } = batchFiles(6);
    const flags = ['batch', input, '-o', output, ...server.endpoint, '--price', '1,2', '--total-budget-usd', '0.003', '--concurrency', '1', '--max-retries', '0'];
    const run = await booth(flags);
    // $0.0012 after question 0, $0.0024 after 1 (under the budget: 2 starts), $0.0036 after 2: 3 to 5 are not started.
    expect(run.code, run.stderr).toBe(4);
    expect(server.provider.received).toHaveLength(3);
    expect(run.stderr).toContain(
      `stopped by --total-budget-usd $0.003: this run's calls cost $0.0036; 3 questions not started. 3 results written to ${output} are kept; the same command checks the rest, spending up to --total-budget-usd again.`,
    );
    const lines = resultsIn(output) as unknown as Line[];
    expect(lines.map((line) => [line.id, line.status])).toEqual([[0, 'VERIFIED'], [1, 'VERIFIED'], [2, 'VERIFIED']]);
    for (const line of lines) expect(line.usage?.costUsd).toBeCloseTo(0.0012, 12);
    expect(run.stdout).toContain('questions 6, already done 0, checked now 3');
    expect(run.stdout).toMatch(/tokens 3,000 in \/ 300 out \/ 3,300 total, cost \$0\.0036/);

    const rest = await booth(flags);
    expect(rest.code, rest.stderr).toBe(0);
    expect(server.provider.received).toHaveLength(6);
    expect(rest.stdout).toContain('questions 6, already done 3, checked now 3');
    expect((resultsIn(output) as unknown as Line[]).map((line) => line.id)).toEqual([0, 1, 2, 3, 4, 5]);
  }, 60_000);

  it('the checks in flight when the budget is spent finish, and their lines are written', async () => {
    // Four at a time; each reply waits a little, so four questions are under way when the first three have spent the budget.
    server.provider.fallback = (body) => ({ ...priced(body), delayMs: 300 });
    const { input, output } = batchFiles(10);
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--price', '1,2', '--total-budget-usd', '0.001', '--concurrency', '4', '--max-retries', '0']);
    expect(run.code, run.stderr).toBe(4);
    // The first four start at once ($0 spent); once one has replied, $0.0012 ≥ $0.001 and no fifth starts.
    expect(server.provider.received).toHaveLength(4);
    expect(server.provider.aborted).toHaveLength(0);
    expect(linesIn(output)).toBe(4);
    expect(run.stderr).toContain("this run's calls cost $0.0048; 6 questions not started. 4 results written");
  }, 60_000);

  it('fails closed: a reply without usage makes the spend unknown, and no further question starts', async () => {
    server.provider.fallback = (body) => ({ text: envelope(`answer ${questionNumber(body)}`, 0.9), usage: null });
    const { input, output } = batchFiles(3);
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--price', '1,2', '--total-budget-usd', '5', '--concurrency', '1', '--max-retries', '0']);
    expect(run.code, run.stderr).toBe(4);
    expect(server.provider.received).toHaveLength(1);
    expect(linesIn(output)).toBe(1);
    expect(run.stderr).toContain('a call replied without reporting its usage, so what this run spent is not known ($0.00 at least) and no question starts (the budget fails closed); 2 questions not started.');
  }, 60_000);

  it('a question whose every call failed costs nothing reported: the batch goes on', async () => {
    server.provider.script.push({ status: 503, body: { error: { message: 'overloaded' } } });
    server.provider.fallback = priced;
    const { input, output } = batchFiles(3);
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--price', '1,2', '--total-budget-usd', '1', '--concurrency', '1', '--max-retries', '0']);
    expect(run.code, run.stderr).toBe(0);
    expect(linesIn(output)).toBe(3);
  }, 60_000);
});

describe('a cascade of models', () => {
  it('ask: the unsure model, then the next one at the same endpoint; the server sees each model, the result names who answered', async () => {
    server.provider.fallback = bySize;
    const run = await booth(['ask', 'capital of France?', '--base-url', base(), '--model', 'small', '--escalate-model', 'big', '--max-retries', '0', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(modelsAsked(server.provider)).toEqual(['small', 'big']);
    const result = JSON.parse(run.stdout) as Line & { models: Array<{ model: string; attempts: number; calls: number }> };
    expect(result).toMatchObject({ status: 'VERIFIED', answer: 'Paris', model: 'big', escalations: [{ attempt: 1, model: 'big' }] });
    expect(result.attempts.map((a) => a.model)).toEqual(['small', 'big']);
    expect(result.models.map((m) => [m.model, m.attempts, m.calls])).toEqual([['small', 1, 1], ['big', 1, 1]]);
  }, 30_000);

  it('ask: each model keeps its own retries, and the lines say which model made each attempt', async () => {
    server.provider.fallback = bySize;
    const run = await booth(['ask', 'capital of France?', '--base-url', base(), '--model', 'small', '--escalate-model', 'big', '--max-retries', '1']);
    expect(run.code, run.stderr).toBe(0);
    expect(modelsAsked(server.provider)).toEqual(['small', 'small', 'big']);
    expect(run.stdout).toContain('model       big');
    expect(run.stdout).toMatch(/models      small: 2 attempts, 2 calls; big: 1 attempt, 1 call/);
  }, 30_000);

  it('an escalation to a second base URL: sent its own key, never the first endpoint\'s', async () => {
    server.provider.fallback = bySize;
    second.provider.fallback = bySize;
    const env = { ...process.env, FIRST_KEY: 'sk-first', SECOND_KEY: 'sk-second' };
    const run = await booth(
      ['ask', 'capital of France?', '--base-url', base(), '--model', 'small', '--api-key-env', 'FIRST_KEY', '--escalate-model', 'big', '--escalate-base-url', secondBase(), '--escalate-api-key-env', 'SECOND_KEY', '--max-retries', '0', '--json'],
      undefined,
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(modelsAsked(server.provider)).toEqual(['small']);
    expect(modelsAsked(second.provider)).toEqual(['big']);
    expect(server.provider.received[0]?.headers['authorization']).toBe('Bearer sk-first');
    expect(second.provider.received[0]?.headers['authorization']).toBe('Bearer sk-second');
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'VERIFIED', model: 'big' });
  }, 30_000);

  it('--escalate-base-url alone: --model again at another endpoint, a fallback when the first is down; no key goes to the second', async () => {
    server.provider.fallback = () => ({ status: 503, body: { error: { message: 'overloaded' } } });
    second.provider.fallback = () => ({ text: envelope('Paris', 0.9) });
    const env = { ...process.env, FIRST_KEY: 'sk-first' };
    const run = await booth(['ask', 'capital of France?', ...server.endpoint, '--api-key-env', 'FIRST_KEY', '--escalate-base-url', secondBase(), '--max-retries', '0', '--json'], undefined, env);
    expect(run.code, run.stderr).toBe(0);
    expect(modelsAsked(server.provider)).toEqual(['test-model']);
    expect(modelsAsked(second.provider)).toEqual(['test-model']);
    expect(second.provider.received[0]?.headers['authorization']).toBeUndefined();
    const result = JSON.parse(run.stdout) as Line;
    const [first, other] = [new URL(server.provider.url).host, new URL(second.provider.url).host];
    expect(result.attempts.map((a) => a.model)).toEqual([`test-model@${first}`, `test-model@${other}`]);
    expect(result.model).toBe(`test-model@${other}`);
  }, 30_000);

  it('batch: the requests per model, the lines\' models, and run.escalate; a rerun with another cascade is refused', async () => {
    // Even questions: the small model is sure; odd ones go on to the big one.
    server.provider.fallback = (body) => {
      const n = questionNumber(body);
      return body['model'] === 'small' ? { text: envelope(`answer ${n}`, n % 2 === 0 ? 0.9 : 0.3) } : { text: envelope(`answer ${n}`, 0.95) };
    };
    const { input, output } = batchFiles(4);
    const flags = ['batch', input, '-o', output, '--base-url', base(), '--model', 'small', '--escalate-model', 'big', '--max-retries', '0', '--concurrency', '1'];
    const run = await booth(flags);
    expect(run.code, run.stderr).toBe(0);
    expect(modelsAsked(server.provider)).toEqual(['small', 'small', 'big', 'small', 'small', 'big']);
    const lines = resultsIn(output) as unknown as Line[];
    expect(lines.map((line) => [line.id, line.status, line.model])).toEqual([[0, 'VERIFIED', 'small'], [1, 'VERIFIED', 'big'], [2, 'VERIFIED', 'small'], [3, 'VERIFIED', 'big']]);
    const host = new URL(server.provider.url).host;
    for (const line of lines) expect(line.run).toMatchObject({ model: 'small', host, escalate: [{ model: 'big', host }] });
    const other = await booth([...flags.slice(0, -4), '--escalate-model', 'huge', '--max-retries', '0', '--concurrency', '1']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(`the cascade (--escalate-model, --escalate-base-url) "big@${host}" → "big@${host}, huge@${host}" (4 lines)`);
    const none = await booth(['batch', input, '-o', output, '--base-url', base(), '--model', 'small', '--max-retries', '0']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`the cascade (--escalate-model, --escalate-base-url) "big@${host}" → none (4 lines)`);
    expect(server.provider.received).toHaveLength(6);
    // The report names the cascade with the run's settings.
    const page = join(dirname(output), 'report.html');
    expect((await booth(['report', output, '-o', page])).code).toBe(0);
    expect(readFileSync(page, 'utf8')).toContain(`big (${host})`);
    // A line whose run.escalate is not what Booth writes ends a rerun, naming the field.
    const rows = resultsIn(output);
    (rows[0] as unknown as { run: Record<string, unknown> }).run['escalate'] = 'big';
    writeFileSync(output, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
    const forged = await booth(flags);
    expect(forged.code).toBe(1);
    expect(forged.stderr).toContain(`${output}:1: its run.escalate is a string, expected an array of models of the cascade ({ model, host })`);
    expect(server.provider.received).toHaveLength(6);
  }, 60_000);
});

describe('a budget per question', () => {
  it('ask --max-calls: no call past the budget; UNCERTAIN, method budget, exit 1', async () => {
    server.provider.fallback = () => ({ text: envelope('Lyon', 0.3) });
    const run = await booth(['ask', 'capital of France?', ...server.endpoint, '--max-retries', '5', '--max-calls', '2', '--json']);
    expect(run.code).toBe(1);
    expect(server.provider.received).toHaveLength(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'UNCERTAIN', method: 'budget', reason: 'BUDGET_SPENT' });
    const printed = await booth(['ask', 'capital of France?', ...server.endpoint, '--max-retries', '5', '--max-calls', '2']);
    expect(printed.stdout).toMatch(/attempts {4}2 \(budget\)/);
    expect(printed.stdout).toMatch(/budget {6}.*2 calls/);
  }, 30_000);

  it('a cascade stops at the budget too: the escalation is a call like any other', async () => {
    server.provider.fallback = bySize;
    const run = await booth(['ask', 'capital of France?', '--base-url', base(), '--model', 'small', '--escalate-model', 'big', '--max-retries', '1', '--max-calls', '2', '--json']);
    expect(run.code).toBe(1);
    expect(modelsAsked(server.provider)).toEqual(['small', 'small']);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'UNCERTAIN', method: 'budget' });
  }, 30_000);

  it('--max-cost-usd, from --price: stops before the call that could pass it', async () => {
    // Each call: 1 000 tokens in, 100 out, at $1 and $2 per million: $0.0012. After two, the third could make $0.0036 > $0.003.
    server.provider.fallback = () => ({ text: envelope('Lyon', 0.3), usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 } });
    const run = await booth(['ask', 'capital of France?', ...server.endpoint, '--max-retries', '5', '--price', '1,2', '--max-cost-usd', '0.003', '--json']);
    expect(run.code).toBe(1);
    expect(server.provider.received).toHaveLength(2);
    const result = JSON.parse(run.stdout) as Line;
    expect(result).toMatchObject({ status: 'UNCERTAIN', method: 'budget' });
    expect(result.usage?.costUsd).toBeCloseTo(0.0024, 12);
  }, 30_000);

  it('batch: the lines the budget stopped, counted in the summary; the exit code is the batch\'s', async () => {
    server.provider.fallback = (body) => ({ text: envelope(`answer ${questionNumber(body)}`, questionNumber(body) === 1 ? 0.3 : 0.9) });
    const { input, output } = batchFiles(3);
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--max-retries', '3', '--max-calls', '2', '--concurrency', '1']);
    expect(run.code, run.stderr).toBe(0);
    expect(server.provider.received).toHaveLength(4);
    const lines = resultsIn(output) as unknown as Line[];
    expect(lines.map((line) => [line.id, line.status, line.method])).toEqual([[0, 'VERIFIED', 'confidence'], [1, 'UNCERTAIN', 'budget'], [2, 'VERIFIED', 'confidence']]);
    expect(run.stdout).toMatch(/\nbudget +1 +33\.3%\n/);
    expect(run.stdout).toContain("questions stopped by the budget: 1 (UNCERTAIN, method budget; this run's budget: --max-calls 2)");
  }, 60_000);
});

describe('adaptive samples', () => {
  it('ask --samples max=5: unanimous replies settle the vote after three; two calls are never made', async () => {
    server.provider.fallback = () => ({ text: envelope('Paris', 0.9) });
    const run = await booth(['ask', 'capital of France?', ...server.endpoint, '--samples', 'max=5', '--max-retries', '0', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(server.provider.received).toHaveLength(3);
    expect(server.provider.aborted).toHaveLength(0);
    const result = JSON.parse(run.stdout) as Line;
    expect(result.attempts[0]?.samples).toHaveLength(3);
    expect(result.attempts[0]?.samples?.some((s) => s.skipped)).toBe(false);
  }, 30_000);

  it('ask --samples max=5,min=5: the calls still in flight when the vote settles are aborted, and recorded as skipped', async () => {
    // Three replies at once settle the vote (3 of 5); the other two are held, and the command closes their connections.
    server.provider.script.push({ text: envelope('Paris', 0.9) }, { text: envelope('Paris', 0.9) }, { text: envelope('Paris', 0.9) });
    server.provider.fallback = () => ({ text: envelope('Lyon', 0.9), delayMs: 20_000 });
    const run = await booth(['ask', 'capital of France?', ...server.endpoint, '--samples', 'max=5,min=5', '--max-retries', '0', '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.ms).toBeLessThan(15_000);
    expect(server.provider.received).toHaveLength(5);
    await expect.poll(() => server.provider.aborted.length).toBe(2);
    const result = JSON.parse(run.stdout) as Line & { agreement: number };
    const samples = result.attempts[0]?.samples ?? [];
    expect(samples).toHaveLength(5);
    expect(samples.filter((s) => s.skipped === true)).toHaveLength(2);
    expect(samples.filter((s) => s.skipped !== true).map((s) => s.answer)).toEqual(['Paris', 'Paris', 'Paris']);
    expect(result).toMatchObject({ status: 'VERIFIED', answer: 'Paris', agreement: 1 });
    server.provider.script.push({ text: envelope('Paris', 0.9) }, { text: envelope('Paris', 0.9) }, { text: envelope('Paris', 0.9) });
    const printed = await booth(['ask', 'capital of France?', ...server.endpoint, '--samples', 'max=5,min=5', '--max-retries', '0']);
    expect(printed.stdout).toContain('agreement   1 (5 samples asked, 2 skipped, of at most 5 per attempt, stop=decided, confidence from hybrid)');
    // A skipped sample is neither a failed call nor an unparseable reply.
    expect(printed.stdout + printed.stderr).not.toMatch(/call failed|unparseable/);
  }, 60_000);

  it('batch --samples max=5: fewer requests than a fixed 5 on the same replies, the same winners; a split vote asks all five', async () => {
    // Question 0 unanimous; question 1 splits 2–2 before its fifth sample decides it.
    const replies = () => {
      const said: Record<number, number> = {};
      return (body: Record<string, unknown>) => {
        const n = questionNumber(body);
        const k = (said[n] = (said[n] ?? 0) + 1);
        return { text: envelope(n === 1 && k % 2 === 0 ? 'Lyon' : 'Paris', 0.9) };
      };
    };
    const { input, output } = batchFiles(2);
    server.provider.fallback = replies();
    const adaptive = await booth(['batch', input, '-o', output, ...server.endpoint, '--samples', 'max=5', '--max-retries', '0', '--concurrency', '1']);
    expect(adaptive.code, adaptive.stderr).toBe(0);
    const lines = resultsIn(output) as unknown as Line[];
    expect(lines.map((line) => [line.id, line.answer])).toEqual([[0, 'Paris'], [1, 'Paris']]);
    expect(lines.map((line) => line.attempts[0]?.samples?.length)).toEqual([3, 5]);
    expect(server.provider.received).toHaveLength(8);
  }, 60_000);
});

describe('adaptive samples: the stopping rule and the record', () => {
  it('stop=0.9 stops at three unanimous replies, where decided needs five of nine', async () => {
    server.provider.fallback = () => ({ text: envelope('Paris', 0.9) });
    const sure = await booth(['ask', 'capital of France?', ...server.endpoint, '--samples', 'max=9,min=1,stop=0.9', '--max-retries', '0', '--json']);
    expect(sure.code, sure.stderr).toBe(0);
    // One, then the fewest more that could settle it: P(leader ahead) is 3/4 after one, 15/16 after three.
    expect(server.provider.received).toHaveLength(3);
    server.provider.received.length = 0;
    const decided = await booth(['ask', 'capital of France?', ...server.endpoint, '--samples', 'max=9,min=1', '--max-retries', '0']);
    expect(decided.code, decided.stderr).toBe(0);
    expect(server.provider.received).toHaveLength(5);
    expect(decided.stdout).toContain('agreement   1 (5 samples asked, of at most 9 per attempt, stop=decided, confidence from hybrid)');
  }, 30_000);

  it('a rerun tells a fixed --samples 5 from max=5: the line records the adaptive form in run.samples', async () => {
    server.provider.fallback = (body) => ({ text: envelope(`answer ${questionNumber(body)}`, 0.9) });
    const { input, output } = batchFiles(2);
    const fixed = await booth(['batch', input, '-o', output, ...server.endpoint, '--samples', '5', '--max-retries', '0']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect((resultsIn(output) as unknown as Line[])[0]?.run).not.toHaveProperty('samples');
    const adaptive = await booth(['batch', input, '-o', output, ...server.endpoint, '--samples', 'max=5', '--max-retries', '0']);
    expect(adaptive.code).toBe(2);
    expect(adaptive.stderr).toContain('--samples 5 → "max=5,stop=decided" (2 lines)');
    const redone = await booth(['batch', input, '-o', output, ...server.endpoint, '--samples', 'max=5', '--max-retries', '0', '--rerun-changed']);
    expect(redone.code, redone.stderr).toBe(0);
    const lines = resultsIn(output) as unknown as Array<Line & { settings: { samples: number } }>;
    for (const line of lines) {
      expect(line.run).toMatchObject({ samples: 'max=5,stop=decided' });
      expect(line.settings.samples).toBe(5);
      expect(line.attempts[0]?.samples).toHaveLength(3);
    }
    // 2 × 5, then 2 × 3.
    expect(server.provider.received).toHaveLength(16);
  }, 60_000);
});

describe('booth worker: the cascade and the budget of a queued run', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  }, 30_000);
  afterAll(() => redis.close());

  it('a worker escalates as ask does, within its budget; batch --queue refuses the flags, which are the worker\'s', async () => {
    server.provider.fallback = (body) => {
      const n = questionNumber(body);
      return body['model'] === 'small' ? { text: envelope(`answer ${n}`, n === 0 ? 0.9 : 0.3) } : { text: envelope(`answer ${n}`, 0.95) };
    };
    const { input, output } = batchFiles(3);
    const refused = await booth(['batch', input, '-o', output, '--queue', redis.url, '--name', 'cascade', '--escalate-model', 'big']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('give --escalate-model to booth worker instead');
    const flags = ['--base-url', base(), '--model', 'small', '--escalate-model', 'big', '--max-retries', '0'];
    const worker = spawnBooth(['worker', '--queue', redis.url, '--name', 'cascade', ...flags, '--max-calls', '2', '--concurrency', '1', '--lock-ms', '2000']);
    try {
      for (const deadline = Date.now() + 20_000; !worker.said().includes('booth worker: checking run'); await sleep(20)) {
        if (worker.child.exitCode !== null || Date.now() > deadline) throw new Error(`worker did not start: ${worker.said()}`);
      }
      // Another worker of the run without the cascade is refused: one run, one way of checking.
      const other = await booth(['worker', '--queue', redis.url, '--name', 'cascade', '--base-url', base(), '--model', 'small', '--max-retries', '0', '--max-calls', '2']);
      expect(other.code).toBe(2);
      expect(other.stderr).toMatch(/run cascade is checked with --escalate-model "big@127\.0\.0\.1:\d+", as its first worker was started; this worker has --escalate-model \(not given\)/);
      const batch = await booth(['batch', input, '--queue', redis.url, '--name', 'cascade', '-o', output]);
      expect(batch.code, batch.stderr).toBe(0);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.done;
    }
    const lines = (resultsIn(output) as unknown as Line[]).sort((a, b) => a.id - b.id);
    expect(lines.map((line) => [line.id, line.status, line.model])).toEqual([[0, 'VERIFIED', 'small'], [1, 'VERIFIED', 'big'], [2, 'VERIFIED', 'big']]);
    const host = new URL(server.provider.url).host;
    for (const line of lines) expect(line.run).toMatchObject({ model: 'small', escalate: [{ model: 'big', host }] });
    expect(modelsAsked(server.provider).sort()).toEqual(['big', 'big', 'small', 'small', 'small']);
  }, 90_000);
});
