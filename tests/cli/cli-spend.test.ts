import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { envelope } from '../fixtures/helpers.js';
import { batchFiles, booth, linesIn, questionNumber, resultsIn, useProvider } from '../fixtures/booth-process.js';
import { startProvider } from '../fixtures/provider-server.js';

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
      [['--escalate-model', 'a', '--escalate-model', 'b', '--escalate-base-url', 'http://127.0.0.1:9/v1'], /error: give one --escalate-base-url per --escalate-model, in the same order \(2 --escalate-model, 1 --escalate-base-url\)/],
      [['--escalate-model', 'big', '--escalate-api-key-env', 'KEY'], /error: option '--escalate-api-key-env' goes with --escalate-base-url/],
      [['--escalate-base-url', 'localhost:8080/v1'], /error: option '--escalate-base-url <url>' is invalid: Expected `baseURL` to start with http:\/\/ or https:\/\//],
      [['--escalate-model', 'test-model'], /error: the cascade asks "test-model" at 127\.0\.0\.1:\d+ twice \(model 1 and model 2\)/],
    ];
    for (const command of [['ask', 'q'], ['batch', input, '-o', output]]) {
      for (const [flags, message] of cases) {
        const run = await booth([...command, ...server.endpoint, ...flags]);
        const label = [command[0], ...flags].join(' ');
        expect(run.code, label).toBe(2);
        expect(run.stderr, label).toMatch(message);
        expect(run.stderr, label).toMatch(/Usage: booth (ask|batch)/);
        expect(run.stderr.split('error:').length - 1, label).toBe(1);
      }
    }
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
