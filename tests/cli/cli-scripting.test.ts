import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envelope } from '../fixtures/helpers.js';
import { batchFiles, booth, dir, linesIn, questionNumber, resultsIn, useProvider } from '../fixtures/booth-process.js';
import { closedPort } from '../fixtures/closed-port.js';
import type { Scripted } from '../fixtures/provider-server.js';

/**
 * `booth` as a script sees it: exit codes, failed calls with their cause, retries of failed
 * calls, and batch runs that end promptly whatever happens to their files or their calls.
 * Every test runs the command as a real process against a real loopback server.
 */

const server = useProvider();

const refused = async () => ['--base-url', `http://127.0.0.1:${await closedPort()}/v1`, '--model', 'test-model'];

describe('booth: exit codes and usage', () => {
  it('bare `booth` is bad usage: exit 2 with the usage message', async () => {
    const run = await booth([]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Usage: booth/);
  }, 30_000);

  it('`booth --version` prints the version of the package and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const run = await booth(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(version);
  }, 30_000);

  it('`booth help` and `booth --help` exit 0', async () => {
    for (const args of [['help'], ['--help'], ['help', 'batch']]) {
      const run = await booth(args);
      expect(run.code, args.join(' ')).toBe(0);
      expect(run.stdout).toMatch(/Usage: booth/);
    }
  }, 30_000);

  it('a bad --call-retries or --timeout-ms exits 2 naming the flag, the value and what is expected', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--call-retries', '-1'], /--call-retries <n>' argument '-1' is invalid\. expected a whole number from 0 to 100\./],
      [['--call-retries', '101'], /--call-retries <n>' argument '101' is invalid\. expected a whole number from 0 to 100\./],
      [['--call-retries', 'three'], /--call-retries <n>' argument 'three' is invalid/],
      [['--timeout-ms', '0'], /--timeout-ms <ms>' argument '0' is invalid\. expected a whole number, 1 or more\./],
    ];
    for (const [flags, message] of cases) {
      const run = await booth(['ask', 'q', ...server.endpoint, ...flags]);
      expect(run.code, flags.join(' ')).toBe(2);
      expect(run.stderr).toMatch(message);
    }
    expect(server.provider.received).toHaveLength(0);
  }, 60_000);

  it('`booth … | head` that closes the pipe early ends quietly, without an EPIPE stack trace', async () => {
    const { spawn } = await import('node:child_process');
    const { CLI } = await import('../fixtures/booth-process.js');
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'demo'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  }, 30_000);
});

describe('booth ask: exit code and failed calls', () => {
  it('exits 0 when the answer is accepted and 1 when it is not (UNCERTAIN, AMBIGUOUS)', async () => {
    server.provider.script.push({ text: envelope('Paris', 0.95) });
    expect((await booth(['ask', 'capital of France?', ...server.endpoint])).code).toBe(0);
    server.provider.script.push({ text: envelope('Paris', 0.3) }, { text: envelope('Paris', 0.3) });
    const uncertain = await booth(['ask', 'capital of France?', ...server.endpoint]);
    expect(uncertain.stdout).toContain('status      UNCERTAIN');
    expect(uncertain.code).toBe(1);
    server.provider.script.push({ text: envelope('4,879 km', 0.9, { ambiguous: true, interpretations: ['planet', 'element'], chosen_interpretation: 'planet' }) });
    const ambiguous = await booth(['ask', 'How big is Mercury?', ...server.endpoint, '--json']);
    expect(JSON.parse(ambiguous.stdout)).toMatchObject({ status: 'AMBIGUOUS' });
    expect(ambiguous.code).toBe(1);
  }, 30_000);

  it('a refused connection is shown with its cause, ECONNREFUSED, and exits 3: no call returned', async () => {
    const flags = await refused();
    const run = await booth(['ask', 'q', ...flags, '--max-retries', '0']);
    expect(run.code).toBe(3);
    expect(run.stdout).toContain('status      UNCERTAIN');
    expect(run.stdout).toMatch(new RegExp(`call failed attempt 1 of 1: POST ${flags[1]}/chat/completions failed: connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+`));
  }, 30_000);

  it('--json carries the cause of a failed call in the attempt, not a bare "fetch failed"', async () => {
    const run = await booth(['ask', 'q', ...(await refused()), '--max-retries', '0', '--json']);
    expect(run.code).toBe(3);
    const result = JSON.parse(run.stdout) as { attempts: Array<{ callFailed: boolean; error: string; rawText: string }> };
    expect(result.attempts[0]?.callFailed).toBe(true);
    expect(result.attempts[0]?.error).toMatch(/failed: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
    expect(result.attempts[0]?.rawText).toMatch(/^TypeError: POST .* ECONNREFUSED/);
  }, 30_000);

  it('a 429, a 501 and a timeout each print their own cause', async () => {
    const cases: Array<[Scripted, string[], RegExp]> = [
      [{ status: 429, body: { error: { message: 'rate limited, slow down' } } }, [], /call failed attempt 1 of 1: .*answered 429 Too Many Requests: rate limited, slow down/],
      [{ status: 501, body: { error: { message: 'no chat here' } } }, [], /call failed attempt 1 of 1: .*answered 501 Not Implemented: no chat here/],
      [{ text: envelope('late', 0.9), delayMs: 3_000 }, ['--timeout-ms', '100'], /call failed attempt 1 of 1: the model call timed out after 100 ms/],
    ];
    for (const [reply, flags, cause] of cases) {
      server.provider.script.push(reply);
      const run = await booth(['ask', 'q', ...server.endpoint, '--max-retries', '0', ...flags]);
      expect(run.code).toBe(3);
      expect(run.stdout).toMatch(cause);
    }
  }, 60_000);

  it('--call-retries tries a failed call again after the wait Retry-After asks for', async () => {
    server.provider.script.push({ status: 429, headers: { 'retry-after': '2' }, body: { error: { message: 'busy' } } }, { text: envelope('Paris', 0.95) });
    const run = await booth(['ask', 'capital of France?', ...server.endpoint, '--call-retries', '1', '--max-retries', '0']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('status      VERIFIED');
    expect(run.stdout).toMatch(/call failed attempt 1 of 1, try 1: .*answered 429 Too Many Requests: busy/);
    const [first, second] = server.provider.received;
    // The backoff alone waits at most 1 s on the first retry; the provider asked for 2 s.
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(1_950);
  }, 30_000);

  it('without --call-retries a failed call is not tried again', async () => {
    server.provider.script.push({ status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'busy' } } }, { text: envelope('Paris', 0.95) });
    const run = await booth(['ask', 'capital of France?', ...server.endpoint, '--max-retries', '0']);
    expect(run.code).toBe(3);
    expect(server.provider.received).toHaveLength(1);
  }, 30_000);

  it('--timeout-ms cuts a slow call and --call-retries tries it again', async () => {
    server.provider.script.push({ text: envelope('late', 0.9), delayMs: 5_000 }, { text: envelope('Paris', 0.95) });
    const run = await booth(['ask', 'q', ...server.endpoint, '--timeout-ms', '300', '--call-retries', '1', '--max-retries', '0']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('answer      Paris');
    expect(run.stdout).toContain('call failed attempt 1 of 1, try 1: the model call timed out after 300 ms');
    expect(run.ms).toBeLessThan(5_000);
  }, 30_000);

  it('counts from 1 in what it prints ("attempt 1 of 2, try 2"), while --json keeps the library\'s 0-based indexes', async () => {
    const busy = { status: 503, headers: { 'retry-after': '0' }, body: { error: { message: 'busy' } } };
    // Attempt 1: both tries fail; attempt 2: the first try fails, the second answers.
    server.provider.script.push(busy, busy, busy, { text: envelope('Paris', 0.95) });
    const args = ['ask', 'capital of France?', ...server.endpoint, '--call-retries', '1', '--max-retries', '1'];
    const run = await booth(args);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('status      REPAIRED');
    expect(run.stdout).toContain('attempts    2 ');
    const failures = run.stdout.split('\n').filter((line) => line.startsWith('call failed'));
    expect(failures.map((line) => line.replace(/: .*/, ''))).toEqual([
      'call failed attempt 1 of 2, try 1',
      'call failed attempt 1 of 2, try 2',
      'call failed attempt 2 of 2, try 1',
    ]);
    for (const line of failures) expect(line).toMatch(/answered 503 Service Unavailable: busy$/);
    server.provider.script.push(busy, busy, busy, { text: envelope('Paris', 0.95) });
    const json = JSON.parse((await booth([...args, '--json'])).stdout) as { attempts: Array<{ callTries: unknown[] }>; trace: Array<{ state: string; attempt: number }> };
    expect(json.attempts.map((a) => a.callTries.length)).toEqual([2, 2]);
    expect(json.trace[0]).toEqual({ state: 'calling', attempt: 0 });
    expect(json.trace.at(-1)?.attempt).toBe(1);
  }, 60_000);
});

describe('booth batch: files, interrupts and the summary', () => {
  it('an output folder that does not exist ends the run at once: exit 1, naming the path and the fix', async () => {
    const { input } = batchFiles(3);
    const output = join(dir(), 'missing', 'results.jsonl');
    const run = await booth(['batch', input, '-o', output, ...server.endpoint]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: cannot write the results file ${output} (-o): ENOENT: no such file or directory. Create its folder first`);
    expect(run.stderr).not.toContain('Usage:');
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);

  it('a questions file that cannot be read ends the run: exit 1, naming the path', async () => {
    const folder = dir();
    const missing = join(folder, 'nope.jsonl');
    const run = await booth(['batch', missing, '-o', join(folder, 'out.jsonl'), ...server.endpoint]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: cannot read the questions file ${missing}: ENOENT`);
    const isFolder = await booth(['batch', folder, '-o', join(folder, 'out.jsonl'), ...server.endpoint]);
    expect(isFolder.code).toBe(1);
    expect(isFolder.stderr).toContain(`error: cannot read the questions file ${folder}: EISDIR`);
  }, 30_000);

  it.runIf(existsSync('/dev/full'))(
    'a write that fails mid-run (disk full) ends it at once, without waiting for the calls in flight: exit 1, naming the path',
    async () => {
      // Question 0 is answered at once; the others would take 30 s.
      server.provider.fallback = (body) => ({ text: envelope('x', 0.9), delayMs: questionNumber(body) === 0 ? 0 : 30_000 });
      const { input } = batchFiles(8);
      const run = await booth(['batch', input, '-o', '/dev/full', ...server.endpoint, '--concurrency', '4']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('error: cannot write the results file /dev/full (-o): ENOSPC: no space left on device. Free some disk space');
      expect(run.ms).toBeLessThan(15_000);
      // No question was started after the failure.
      expect(server.provider.received.length).toBeLessThanOrEqual(4);
    },
    30_000,
  );

  it('the first Ctrl-C keeps the paid work: no new question starts, the checks in flight finish and every call the server received is in the output', async () => {
    server.provider.fallback = () => ({ text: envelope('x', 0.9), delayMs: 3_000 });
    const { input, output } = batchFiles(6);
    let sent = false;
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--concurrency', '2'], (child) => {
      if (!sent && server.provider.received.length >= 2) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    expect(run.code).toBe(130);
    expect(run.stderr).toContain('stopping: no new question starts; the checks in flight finish and their lines are written (Ctrl-C again to stop them now)');
    expect(server.provider.received).toHaveLength(2);
    const asked = server.provider.received.map((r) => questionNumber(r.body)).sort();
    expect(resultsIn(output).map((r) => Number(r.id)).sort()).toEqual(asked);
    expect(run.stderr).toContain(`stopped: 2 results written to ${output}`);
    expect(run.stdout).toContain('questions 6, already done 0, checked now 2');
  }, 30_000);

  it('Ctrl-C on a batch whose calls hang waits for them; a second Ctrl-C ends it at once, 130, every written line whole', async () => {
    server.provider.fallback = (body) => ({ text: envelope('x', 0.9), delayMs: questionNumber(body) < 3 ? 0 : 60_000 });
    const { input, output } = batchFiles(20);
    let first = 0;
    let second = false;
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--concurrency', '4'], (child) => {
      if (!first && linesIn(output) >= 3) {
        first = performance.now();
        child.kill('SIGINT');
      } else if (first && !second && performance.now() - first > 1_000) {
        // Still running a second later: the hung calls are being waited for.
        second = true;
        child.kill('SIGINT');
      }
    });
    expect(second).toBe(true);
    expect(run.code).toBe(130);
    expect(run.stderr).toContain('stopped at once: the results written so far are in');
    expect(resultsIn(output)).toHaveLength(3);
    for (const line of readFileSync(output, 'utf8').split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
  }, 30_000);

  it('the summary counts failed calls apart from unparseable replies', async () => {
    // Question n: n % 3 = 0 fails (500), n % 3 = 1 replies with prose, n % 3 = 2 answers.
    server.provider.fallback = (body) => {
      const n = questionNumber(body);
      if (n % 3 === 0) return { status: 500, body: { error: { message: 'upstream down' } } };
      return { text: n % 3 === 1 ? 'I think it is 42.' : envelope('42', 0.9) };
    };
    const { input, output } = batchFiles(9);
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--max-retries', '0']);
    expect(run.code).toBe(0); // some calls got through: not an outage
    expect(run.stdout).toContain('failed calls 3 (every call failed for 3 questions), unparseable replies 3');
    expect(run.stdout).toMatch(/call_failure\s+3\s+33\.3%/);
    expect(run.stdout).toMatch(/parse_failure\s+3\s+33\.3%/);
    const byId = new Map(resultsIn(output).map((r) => [r.id, r]));
    expect(byId.get(0)).toMatchObject({ callFailed: true, allParseFailed: true });
    expect(byId.get(1)).toMatchObject({ callFailed: false, allParseFailed: true });
  }, 30_000);

  it('a rerun checks again the questions whose every call failed; --no-retry-failed keeps them', async () => {
    const { input, output } = batchFiles(6);
    const down = await booth(['batch', input, '-o', output, ...(await refused()), '--max-retries', '0']);
    // Every line was handled, but no call got through: an outage, which a script tells by 3.
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('every model call of this run failed (6 questions)');
    expect(down.stdout).toContain('failed calls 6 (every call failed for 6 questions), unparseable replies 0');
    expect(down.stdout).toMatch(/call_failure\s+6\s+100\.0%/);
    expect(resultsIn(output).every((r) => r['callFailed'] === true && /ECONNREFUSED/.test(String((r['attempts'] as Array<{ error: string }>)[0]?.error)))).toBe(true);

    server.provider.fallback = () => ({ text: envelope('42', 0.9) });
    const kept = await booth(['batch', input, '-o', output, ...server.endpoint, '--no-retry-failed']);
    expect(kept.code).toBe(0);
    expect(server.provider.received).toHaveLength(0);
    expect(kept.stdout).toContain('nothing left to check: every question already has a result');

    const redone = await booth(['batch', input, '-o', output, ...server.endpoint]);
    expect(redone.code).toBe(0);
    expect(redone.stderr).toContain('6 questions whose every call failed are checked again (--no-retry-failed keeps them)');
    expect(server.provider.received).toHaveLength(6);
    const results = resultsIn(output);
    expect(results.map((r) => r.id).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(results.every((r) => r.status === 'VERIFIED')).toBe(true);
    expect(redone.stdout).toMatch(/VERIFIED\s+6\s+100\.0%/);
  }, 60_000);

  it('the summary after a resume covers the whole file; with nothing left to check it says so', async () => {
    // Questions 0–3 are written by a first run that stops; the rest by the resume.
    server.provider.fallback = (body) => ({ text: envelope('x', questionNumber(body) === 0 ? 0.2 : 0.9) });
    const { input, output } = batchFiles(4);
    await booth(['batch', input, '-o', output, ...server.endpoint, '--max-retries', '0']);
    const { input: more } = batchFiles(8);
    const resumed = await booth(['batch', more, '-o', output, ...server.endpoint, '--max-retries', '0']);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('questions 8, already done 4, checked now 4');
    expect(resumed.stdout).toContain(`results of all 8 questions in ${output}:`);
    expect(resumed.stdout).toMatch(/VERIFIED\s+7\s+87\.5%/);
    expect(resumed.stdout).toMatch(/UNCERTAIN\s+1\s+12\.5%/);
    expect(resumed.stdout).toMatch(/mean attempts 1\.00, latency p50 \d+ ms/);

    const again = await booth(['batch', more, '-o', output, ...server.endpoint, '--max-retries', '0']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('questions 8, already done 8, checked now 0');
    expect(again.stdout).toContain(`nothing left to check: every question already has a result in ${output}`);
    expect(again.stdout).toMatch(/VERIFIED\s+7\s+87\.5%/);
    expect(again.stdout).not.toContain('mean attempts 0.00');
    expect(again.stderr).not.toContain('booth batch |');
  }, 60_000);

  it('a questions file without one valid line says there is nothing to check, and exits 1 naming the problem', async () => {
    const { input, output } = batchFiles(0);
    const run = await booth(['batch', input, '-o', output, ...server.endpoint]);
    expect(run.code).toBe(1);
    expect(run.stdout.trim()).toBe(`nothing to check: ${input} holds no questions`);
    expect(run.stderr).toContain(`error: ${input} holds no question: each line must be a JSON object { "id": …, "prompt": "…" }`);
    writeFileSync(input, 'not json\n{"id": 1}\n');
    const invalid = await booth(['batch', input, '-o', output, ...server.endpoint]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('warning:');
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);

  it('result lines keep the prompts out by default; --with-prompts puts them in', async () => {
    server.provider.fallback = () => ({ text: envelope('42', 0.9) });
    const { input, output } = batchFiles(2);
    await booth(['batch', input, '-o', output, ...server.endpoint]);
    const lean = readFileSync(output, 'utf8').split('\n')[0] ?? '';
    expect(JSON.parse(lean)).not.toHaveProperty('prompts');
    expect(lean).not.toContain('exactly one JSON object');

    const withPrompts = join(dir(), 'with-prompts.jsonl');
    await booth(['batch', input, '-o', withPrompts, ...server.endpoint, '--with-prompts']);
    const full = JSON.parse(readFileSync(withPrompts, 'utf8').split('\n')[0] ?? '') as { prompts: Array<{ kind: string; text: string }> };
    expect(full.prompts[0]?.kind).toBe('first');
    expect(full.prompts[0]?.text).toMatch(/^question \d\n\n/);
    expect(lean.length).toBeLessThan(readFileSync(withPrompts, 'utf8').split('\n')[0]?.length ?? 0);
  }, 30_000);

  it('--call-retries reaches every check of a batch', async () => {
    server.provider.script.push({ status: 503, headers: { 'retry-after': '0' }, body: { error: { message: 'warming up' } } });
    server.provider.fallback = () => ({ text: envelope('42', 0.9) });
    const { input, output } = batchFiles(3);
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--concurrency', '1', '--call-retries', '1', '--max-retries', '0']);
    expect(run.code).toBe(0);
    expect(resultsIn(output).every((r) => r.status === 'VERIFIED')).toBe(true);
    expect(run.stdout).toContain('failed calls 1, unparseable replies 0');
  }, 30_000);
});

describe('booth ask: the conversation and the samples, on the wire', () => {
  const bodies = () => server.provider.received.map((r) => r.body);

  it('--system and --system-file send the system prompt before Booth\'s instructions; both at once is bad usage', async () => {
    server.provider.fallback = () => ({ text: envelope('Paris', 0.95) });
    await booth(['ask', 'capital of France?', ...server.endpoint, '--system', 'You are a geographer.']);
    const file = join(dir(), 'system.txt');
    writeFileSync(file, 'You are a cartographer.\nBe brief.');
    await booth(['ask', 'capital of France?', ...server.endpoint, '--system-file', file]);
    const systems = bodies().map((body) => (body['messages'] as Array<{ role: string; content: string }>)[0]);
    expect(systems[0]?.role).toBe('system');
    expect(systems[0]?.content).toMatch(/^You are a geographer\.\n\nRespond with exactly one JSON object/);
    expect(systems[1]?.content).toMatch(/^You are a cartographer\.\nBe brief\.\n\nRespond with exactly one JSON object/);
    const both = await booth(['ask', 'q', ...server.endpoint, '--system', 'a', '--system-file', file]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give the system prompt once: --system <text> or --system-file <file>, not both.');
    const missing = await booth(['ask', 'q', ...server.endpoint, '--system-file', join(dir(), 'nope.txt')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/error: cannot read the system prompt file .*nope\.txt \(--system-file\): ENOENT: no such file or directory\. Check the path\./);
    expect(server.provider.received).toHaveLength(2);
  }, 30_000);

  it('--samples sends each sample its own seed at the sample temperature; --temperature is for the other calls', async () => {
    server.provider.fallback = () => ({ text: envelope('Paris', 0.95) });
    await booth(['ask', 'q', ...server.endpoint, '--samples', '3', '--seed', '40', '--temperature', '0']);
    expect(bodies().map((body) => [body['temperature'], body['seed']])).toEqual([
      [1, 40],
      [1, 41],
      [1, 42],
    ]);
    server.provider.received.length = 0;
    await booth(['ask', 'q', ...server.endpoint, '--samples', '2', '--sample-temperature', '0.6']);
    expect(bodies().map((body) => [body['temperature'], body['seed']])).toEqual([
      [0.6, 0],
      [0.6, 1],
    ]);
    server.provider.received.length = 0;
    await booth(['ask', 'q', ...server.endpoint, '--temperature', '0.2']);
    expect(bodies()[0]).toMatchObject({ temperature: 0.2 });
  }, 30_000);

  it('--sample-temperature 0 is bad usage saying why, before any call', async () => {
    const run = await booth(['ask', 'q', ...server.endpoint, '--samples', '3', '--sample-temperature', '0']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("option '--sample-temperature <t>' argument '0' is invalid. expected a number above 0: at 0 every sample is the same reply");
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);

  it('a --base-url without a scheme, or that is not a URL, is bad usage before any call: exit 2', async () => {
    for (const [url, reason] of [
      ['localhost:18080/v1', 'Expected `baseURL` to start with http:// or https://'],
      ['notaurl', 'Expected `baseURL` to be a URL such as'],
    ] as const) {
      for (const command of [['ask', 'q'], ['batch', batchFiles(1).input, '-o', join(dir(), 'out.jsonl')]]) {
        const run = await booth([...command, '--base-url', url, '--model', 'm']);
        expect(run.code, `${command[0]} ${url}`).toBe(2);
        expect(run.stderr).toContain(`error: option '--base-url <url>' is invalid: ${reason}`);
      }
    }
  }, 60_000);
});

describe('booth: files it cannot use are named before any paid call', () => {
  it('ask --html into a folder that does not exist: exit 1 naming the page and the fix, and no call made', async () => {
    const page = join(dir(), 'missing-folder', 'trace.html');
    const run = await booth(['ask', 'q', ...server.endpoint, '--html', page]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: cannot write the page ${page} (--html): `);
    expect(run.stderr).toContain('Create its folder first, or give --html a path in a folder that exists.');
    expect(server.provider.received).toHaveLength(0);
    const folder = await booth(['ask', 'q', ...server.endpoint, '--html', dir()]);
    expect(folder.code).toBe(1);
    expect(folder.stderr).toContain('Name a file, not a folder.');
    expect(server.provider.received).toHaveLength(0);
    // A link planted at the page's path would have the page written over the file it points at.
    const victim = join(dir(), 'victim.txt');
    writeFileSync(victim, 'keep me');
    const linked = join(dir(), 'trace.html');
    symlinkSync(victim, linked);
    const link = await booth(['ask', 'q', ...server.endpoint, '--html', linked]);
    expect(link.code).toBe(1);
    expect(link.stderr).toContain(`error: cannot write the page ${linked} (--html): it is a symbolic link`);
    expect(readFileSync(victim, 'utf8')).toBe('keep me');
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);

  it('calibrate on a file that does not exist: exit 1 naming it, not a raw ENOENT', async () => {
    const missing = join(dir(), 'nope.jsonl');
    const run = await booth(['calibrate', missing]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe(`error: cannot read the results file ${missing}: ENOENT: no such file or directory. Check the path.`);
  }, 30_000);
});
