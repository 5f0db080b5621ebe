import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_DELAYS } from '../../src/cli/queue/worker.js';
import { envelope } from '../fixtures/helpers.js';
import { booth, dir, linesIn, resultsIn, type Run, spawnBooth, useProvider } from '../fixtures/booth-process.js';
import { closedPort } from '../fixtures/closed-port.js';
import { type RedisServer, startRedis } from '../fixtures/redis-server.js';

// `booth batch --queue` and `booth worker` as real processes, on a real redis-server of this
// file's own and the loopback model provider: no part of the queue is simulated.

const server = useProvider();
let redis: RedisServer;
let client: Redis;
let runs = 0;

beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url, { maxRetriesPerRequest: null });
  client.on('error', () => undefined); // the restart test takes the server away on purpose
}, 30_000);

// Every worker a test starts, so that one failing midway leaves no process behind.
const started: ChildProcess[] = [];

afterAll(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  client.disconnect();
  await redis.close();
});

/** A fresh run name per test: the tests share the server, never a run. */
const newRun = () => `run-${++runs}`;

/** The prompt's first line: "question 17" for every attempt of question 17. */
const questionOf = (body: Record<string, unknown>) => ((body['messages'] as Array<{ content: string }>).at(-1)?.content ?? '').split('\n')[0] ?? '';
/** All a request said to the model: its system message and its user turn. */
const promptOf = (body: Record<string, unknown>) => (body['messages'] as Array<{ content: string }>).map((message) => message.content).join('\n\n');

/** FNV-1a: the same prompt always gets the same reply, wherever and however often it is asked. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * The scripted model: its reply is a function of the prompt alone (prose, low or high
 * confidence), so a local and a distributed batch of the same file get the same results; its
 * delay is random, so the workers finish in no particular order.
 */
function scriptedModel(maxDelayMs: number) {
  return (body: Record<string, unknown>) => {
    const prompt = promptOf(body);
    const n = /question (\d+)/.exec(prompt)?.[1];
    const roll = hash(prompt) % 10;
    const text = roll === 0 ? 'I would rather not say.' : envelope(`answer ${n}`, roll <= 3 ? 0.3 : 0.9);
    return { text, delayMs: Math.random() * maxDelayMs };
  };
}

function questions(count: number): string {
  const file = join(dir(), 'questions.jsonl');
  writeFileSync(file, Array.from({ length: count }, (_, i) => JSON.stringify({ id: i, prompt: `question ${i}`, expected: `answer ${i}` })).join('\n'));
  return file;
}

type Worker = ReturnType<typeof spawnBooth>;

/**
 * A `booth worker` of `run`, once it says it is taking jobs. Its lock lapses 2 s after it
 * dies (30 s by default): long enough that a worker slowed by this busy machine keeps its jobs.
 */
async function worker(run: string, flags: string[] = [], label = 'worker'): Promise<Worker> {
  // The label goes into the path of its calls, so the provider knows which worker made each.
  const endpoint = ['--base-url', `${server.provider.url}/${label}/v1`, '--model', 'test-model'];
  const spawned = spawnBooth(['worker', '--queue', redis.url, '--name', run, ...endpoint, '--lock-ms', '2000', ...flags]);
  started.push(spawned.child);
  for (const deadline = Date.now() + 20_000; !spawned.said().includes('booth worker: checking run'); await sleep(20)) {
    if (spawned.child.exitCode !== null || Date.now() > deadline) throw new Error(`worker did not start: ${spawned.said()}`);
  }
  return spawned;
}

async function stopped(workers: readonly Worker[]): Promise<Run[]> {
  for (const { child } of workers) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  return Promise.all(workers.map((w) => w.done));
}

/** A result line without what depends on timing: what a check decided, and from which replies. */
function decided(row: Record<string, unknown>): unknown {
  return JSON.parse(JSON.stringify(row), (key, value: unknown) => (key === 'latencyMs' || key === 'durationMs' ? undefined : value));
}

const byId = (rows: ReadonlyArray<{ id: unknown }>) => [...rows].sort((a, b) => Number(a.id) - Number(b.id));

describe('booth batch --queue with booth worker', () => {
  it('1 000 questions over three workers, one killed with SIGKILL and another started: one line per question, no finished attempt called twice, the same lines as a local batch', async () => {
    server.provider.fallback = scriptedModel(30);
    const input = questions(1_000);
    const flags = ['--max-retries', '2', '--concurrency', '8'];

    // The same file checked here first, by one process, with the same model: the calls an uninterrupted run makes.
    const local = join(dir(), 'local.jsonl');
    const here = await booth(['batch', input, '-o', local, ...server.endpoint, ...flags]);
    expect(here.code, here.stderr).toBe(0);
    const callsOf = () => {
      // Attempts may send the same prompt (a reconsideration after the same answer): count per prompt.
      const calls = new Map<string, string[]>();
      for (const { body, path } of server.provider.received) calls.set(promptOf(body), [...(calls.get(promptOf(body)) ?? []), path]);
      return calls;
    };
    const uninterrupted = callsOf();
    server.provider.received.length = 0;

    const output = join(dir(), 'results.jsonl');
    const run = newRun();
    const workers = await Promise.all([worker(run, flags, 'killed'), worker(run, flags), worker(run, flags)]);
    let killedAt = 0;
    let replacement: Promise<Worker> | null = null;
    const batch = await booth(['batch', input, '--queue', redis.url, '--name', run, '-o', output], () => {
      if (killedAt === 0 && linesIn(output) >= 300) {
        workers[0]?.child.kill('SIGKILL');
        killedAt = performance.now();
        replacement = worker(run, flags);
      }
    });
    expect(batch.code, batch.stderr).toBe(0);
    expect(killedAt).toBeGreaterThan(0);
    const ended = await stopped([...workers.slice(1), await (replacement as unknown as Promise<Worker>)]);
    for (const w of ended) expect(w.code, w.stderr).toBe(0);

    const rows = resultsIn(output);
    expect(rows).toHaveLength(1_000);
    expect(new Set(rows.map((r) => r.id)).size).toBe(1_000);
    expect(batch.stdout).toContain('questions 1000, already done 0, checked now 1000');

    // Only calls in flight in the killed worker were made again, each once, by another worker.
    const extra = [...callsOf()].flatMap(([prompt, paths]) => {
      const expected = uninterrupted.get(prompt)?.length ?? 0;
      expect(paths.length, prompt).toBeGreaterThanOrEqual(expected);
      return paths.length > expected ? [{ paths, again: paths.length - expected }] : [];
    });
    expect(extra.length).toBeLessThanOrEqual(8); // the killed worker's concurrency
    for (const { paths, again } of extra) {
      expect(again).toBe(1);
      // (A question may send one prompt twice, when it reconsiders the same answer again.)
      expect(paths.some((path) => path.startsWith('/killed/')), paths.join(' ')).toBe(true);
      expect(paths.some((path) => !path.startsWith('/killed/')), paths.join(' ')).toBe(true);
    }

    expect(byId(rows).map(decided)).toEqual(byId(resultsIn(local)).map(decided));
    expect(new Set(rows.map((r) => r.status))).toEqual(new Set(['VERIFIED', 'REPAIRED', 'UNCERTAIN']));
    // The summary's counts are a local batch's.
    const summary = (text: string) => text.slice(text.indexOf('status ')).replace(/latency.*\n/, '');
    expect(summary(batch.stdout)).toBe(summary(here.stdout));
  }, 180_000);

  it('Redis restarted mid-run, losing what it held: the workers and the waiting batch reconnect and finish, one line per question', async () => {
    server.provider.fallback = scriptedModel(20);
    const input = questions(300);
    const output = join(dir(), 'results.jsonl');
    const run = newRun();
    const workers = await Promise.all([worker(run), worker(run)]);
    let restarted: Promise<void> | null = null;
    const batch = await booth(['batch', input, '--queue', redis.url, '--name', run, '-o', output], () => {
      if (restarted === null && linesIn(output) >= 100) restarted = redis.stop().then(() => sleep(500)).then(() => redis.start());
    });
    await restarted;
    expect(batch.code, batch.stderr).toBe(0);
    expect(batch.stderr).toContain('lost the connection to Redis');
    expect(batch.stderr).toContain('reconnected to Redis');
    const rows = resultsIn(output);
    expect(rows).toHaveLength(300);
    expect(new Set(rows.map((r) => r.id)).size).toBe(300);
    for (const w of await stopped(workers)) expect(w.code, w.stderr).toBe(0);
  }, 120_000);

  it('enqueuing twice is harmless: a batch stopped with Ctrl-C and run again, then --collect into another file, give one line per question', async () => {
    server.provider.fallback = scriptedModel(20);
    const input = questions(200);
    const output = join(dir(), 'results.jsonl');
    const run = newRun();
    // No worker yet: the batch queues the questions, shows its bar, and waits; Ctrl-C stops the waiting.
    const waiting = spawnBooth(['batch', input, '--queue', redis.url, '--name', run, '-o', output]);
    while (!waiting.said().includes('booth batch |')) await sleep(20);
    waiting.child.kill('SIGINT');
    const first = await waiting.done;
    expect(first.code).toBe(130);
    expect(first.stderr).toContain('the workers go on');
    const workers = [await worker(run)];
    const again = await booth(['batch', input, '--queue', redis.url, '--name', run, '-o', output]);
    expect(again.code, again.stderr).toBe(0);
    expect(resultsIn(output)).toHaveLength(200);
    expect(new Set(resultsIn(output).map((r) => r.id)).size).toBe(200);
    const calledOnce = new Set(server.provider.received.map((r) => promptOf(r.body)));
    expect(calledOnce.size).toBe(server.provider.received.length);

    // --collect needs neither the file nor a model: the run's questions are in Redis, its results too.
    const elsewhere = join(dir(), 'collected.jsonl');
    const collected = await booth(['batch', '--queue', redis.url, '--name', run, '--collect', '-o', elsewhere]);
    expect(collected.code, collected.stderr).toBe(0);
    expect(collected.stdout).toContain('questions 200, already done 0, checked now 200');
    expect(byId(resultsIn(elsewhere))).toEqual(byId(resultsIn(output)));
    expect(server.provider.received.length).toBe(calledOnce.size); // collecting called nothing
    for (const w of await stopped(workers)) expect(w.code, w.stderr).toBe(0);
  }, 120_000);

  it('question ids that are any JSON string or number get their own job and line: a lone surrogate, U+FFFD, ":", "%", "1" beside 2', async () => {
    server.provider.fallback = scriptedModel(5);
    const ids: Array<string | number> = ['\ud800', '\ufffd', 'a:b', 'a%3Ab', '%ud800', '1', 2];
    const input = join(dir(), 'questions.jsonl');
    writeFileSync(input, ids.map((id, i) => JSON.stringify({ id, prompt: `question ${i}` })).join('\n'));
    const output = join(dir(), 'results.jsonl');
    const run = newRun();
    const workers = [await worker(run)];
    const batch = await booth(['batch', input, '--queue', redis.url, '--name', run, '-o', output]);
    expect(batch.code, batch.stderr).toBe(0);
    expect(resultsIn(output).map((r) => r.id).sort()).toEqual([...ids].sort());
    for (const w of await stopped(workers)) expect(w.code, w.stderr).toBe(0);
  }, 60_000);

  it('a 429 with Retry-After puts off only its own question; the others go on meanwhile', async () => {
    const refused = { n: 0 };
    server.provider.fallback = (body) => {
      if (questionOf(body) === 'question 0' && refused.n < 2) {
        refused.n += 1;
        return { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'slow down' } } };
      }
      return scriptedModel(10)(body);
    };
    const input = questions(40);
    const output = join(dir(), 'results.jsonl');
    const run = newRun();
    const workers = [await worker(run, ['--concurrency', '1'])];
    const batch = await booth(['batch', input, '--queue', redis.url, '--name', run, '-o', output]);
    expect(batch.code, batch.stderr).toBe(0);
    const rows = resultsIn(output);
    expect(rows).toHaveLength(40);
    // With one slot, a question waiting in it would hold up every other for two seconds: here it was the last done.
    expect(rows.at(-1)?.id).toBe(0);
    const zero = server.provider.received.filter((r) => questionOf(r.body) === 'question 0').map((r) => r.at);
    expect(zero[2]! - zero[1]!).toBeGreaterThanOrEqual(950); // Retry-After: 1 s, twice
    expect(zero[1]! - zero[0]!).toBeGreaterThanOrEqual(950);
    // The refused calls were put off, not failed: the result has no trace of them.
    expect((rows.at(-1)?.['attempts'] as Array<{ callTries: Array<{ error: unknown }> }>)[0]?.callTries).toEqual([{ error: null, delayMs: null }]);
    for (const w of await stopped(workers)) expect(w.code, w.stderr).toBe(0);
  }, 60_000);

  it(`after ${MAX_DELAYS} put-offs a 429 reaches the check as a failed call`, async () => {
    server.provider.fallback = () => ({ status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'slow down' } } });
    const input = questions(1);
    const output = join(dir(), 'results.jsonl');
    const run = newRun();
    const workers = [await worker(run, ['--max-retries', '0'])];
    const batch = await booth(['batch', input, '--queue', redis.url, '--name', run, '-o', output]);
    // Its one question's every call failed: an outage.
    expect(batch.code, batch.stderr).toBe(3);
    expect(server.provider.received).toHaveLength(MAX_DELAYS + 1);
    expect(resultsIn(output)[0]).toMatchObject({ status: 'UNCERTAIN', attempts: [{ callFailed: true }] });
    for (const w of await stopped(workers)) expect(w.code, w.stderr).toBe(0);
  }, 60_000);

  it('--rate is shared by the run\'s workers: two workers at 10/s start no more than 10 questions a second together', async () => {
    server.provider.fallback = () => ({ text: envelope('yes', 0.9) });
    const input = questions(40);
    const output = join(dir(), 'results.jsonl');
    const run = newRun();
    const workers = await Promise.all([worker(run, ['--rate', '10/s']), worker(run, ['--rate', '10/s'])]);
    const batch = await booth(['batch', input, '--queue', redis.url, '--name', run, '-o', output]);
    expect(batch.code, batch.stderr).toBe(0);
    const times = server.provider.received.map((r) => r.at).sort((a, b) => a - b);
    expect(times).toHaveLength(40);
    // BullMQ's limiter counts fixed one-second windows: 10 calls may end one window and 10 begin the
    // next, but any 21 in a row reach into a third, a second later (less the calls' own jitter).
    for (let i = 0; i + 20 < times.length; i++) expect(times[i + 20]! - times[i]!).toBeGreaterThan(900);
    expect(times.at(-1)! - times[0]!).toBeGreaterThan(2_500);
    for (const w of await stopped(workers)) expect(w.code, w.stderr).toBe(0);
  }, 60_000);

  it('SIGTERM finishes the checks in flight before the worker exits; a second stops them, and they resume elsewhere without repeating a finished attempt', async () => {
    // Every first attempt is unsure and slow, so a check is two calls with time between them.
    server.provider.fallback = (body) => ({ text: envelope('yes', promptOf(body).includes('previous') ? 0.9 : 0.3), delayMs: 400 });
    const input = questions(4);
    const output = join(dir(), 'results.jsonl');
    const run = newRun();
    const first = await worker(run, ['--concurrency', '2']);
    const batch = booth(['batch', input, '--queue', redis.url, '--name', run, '-o', output]);
    while (server.provider.received.length < 2) await sleep(10);
    first.child.kill('SIGTERM');
    const graceful = await first.done;
    expect(graceful.code, graceful.stderr).toBe(0);
    expect(graceful.stderr).toContain('finishing the checks in flight');
    // Its two questions were finished, and it took no other.
    expect(server.provider.received).toHaveLength(4);
    await sleep(200);
    expect(linesIn(output)).toBe(2);

    const second = await worker(run, ['--concurrency', '2']);
    while (server.provider.received.length < 8) await sleep(10);
    await sleep(50); // the second calls are in flight; the first attempts are saved
    second.child.kill('SIGTERM');
    await sleep(50);
    second.child.kill('SIGTERM');
    const forced = await second.done;
    expect(forced.code, forced.stderr).toBe(130);

    const third = await worker(run, ['--concurrency', '2']);
    expect((await batch).code).toBe(0);
    expect(resultsIn(output)).toHaveLength(4);
    // The first attempts of the questions stopped were not asked again; their second were.
    const asked = server.provider.received.map((r) => promptOf(r.body));
    expect(asked.filter((p) => !p.includes('previous'))).toHaveLength(4);
    expect(asked.filter((p) => p.includes('previous'))).toHaveLength(6);
    for (const w of await stopped([third])) expect(w.code, w.stderr).toBe(0);
  }, 60_000);

  it('a worker paused past its lock (SIGSTOP) finds its jobs taken over when it wakes: it calls nothing more and overwrites nothing', async () => {
    // Every first attempt is unsure and slow, so a check is two calls with time between them.
    server.provider.fallback = (body) => ({ text: envelope('yes', promptOf(body).includes('previous') ? 0.9 : 0.3), delayMs: 300 });
    const input = questions(4);
    const output = join(dir(), 'results.jsonl');
    const run = newRun();
    const paused = await worker(run, ['--concurrency', '4'], 'paused');
    const batch = booth(['batch', input, '--queue', redis.url, '--name', run, '-o', output]);
    while (server.provider.received.length < 4) await sleep(10);
    paused.child.kill('SIGSTOP'); // its four first calls are in flight
    const other = await worker(run, ['--concurrency', '4']);
    expect((await batch).code).toBe(0); // the other worker took the jobs over once their locks lapsed
    const answered = resultsIn(output);
    paused.child.kill('SIGCONT');
    for (const deadline = Date.now() + 10_000; (paused.said().match(/lost its lock/g) ?? []).length < 4 && Date.now() < deadline; ) await sleep(50);
    expect(paused.said().match(/lost its lock/g)).toHaveLength(4);

    const asked = server.provider.received.map((r) => [r.path.split('/')[1], promptOf(r.body).includes('previous') ? 'second' : 'first']);
    // The paused worker's first calls were in flight, so they were made again; nothing after them was made twice.
    expect(asked.filter(([, attempt]) => attempt === 'first')).toHaveLength(8);
    expect(asked.filter(([by, attempt]) => by === 'paused' && attempt === 'second')).toEqual([]);
    expect(asked.filter(([, attempt]) => attempt === 'second')).toHaveLength(4);
    const stored = await client.hvals(`booth:run:${run}:results`);
    expect(stored.map((text) => (JSON.parse(text) as { id: number }).id).sort()).toEqual([0, 1, 2, 3]);
    expect(await client.xlen(`booth:run:${run}:finished`)).toBe(4); // the waking worker added no second result
    expect(resultsIn(output)).toEqual(answered);
    for (const w of await stopped([paused, other])) expect(w.code, w.stderr).toBe(0);
  }, 60_000);

  it('a worker refuses run settings in Redis that no worker wrote (null, an array, not JSON, a nested value), naming the key, never crashing', async () => {
    for (const [text, problem] of [
      ['null', 'holds null, not a JSON object of check flags such as {"--threshold":0.7}'],
      ['[1,2]', 'holds an array, not a JSON object of check flags'],
      ['{"--threshold":', 'is not JSON'],
      ['{"--threshold":{"<b>":1}}', 'gives "--threshold" an object, where a flag has a string, number, boolean or null'],
    ] as const) {
      const run = newRun();
      await client.set(`booth:run:${run}:settings`, text);
      const refused = await booth(['worker', '--queue', redis.url, '--name', run, ...server.endpoint]);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).not.toContain('Cannot read properties');
      expect(refused.stderr).toContain(`error: run ${run} has check flags in Redis that no worker wrote: booth:run:${run}:settings ${problem}`);
      expect(refused.stderr).toContain('delete it in Redis and start them again');
    }
  }, 60_000);

  it('20 samples of 2 MB each: the worker keeps its lock while they vote, and the question is checked once, in 20 calls', async () => {
    // Every call a different long answer, differing only at its end: 20 clusters of one. The
    // vote once normalized both answers of every pair, holding the worker's event loop long
    // past its lock (2 s here): the job was taken over and run again, for ever.
    const prose = 'lorem ipsum dolor sit amet, '.repeat(Math.ceil((2 << 20) / 28));
    let calls = 0;
    server.provider.fallback = () => ({ text: envelope(`${prose} ${calls++}`, 0.9) });
    const input = questions(1);
    const output = join(dir(), 'results.jsonl');
    const run = newRun();
    // A lock of 10 s, not this file's 2 s: on a busy machine a 2 MB reply takes up to half a
    // second to read and the 130 MB line some hundreds of milliseconds to hand to Redis, too
    // near a 2 s lock's renewal each second; the vote that compared every pair took minutes.
    const workers = [await worker(run, ['--samples', '20', '--max-retries', '0', '--lock-ms', '10000'])];
    const batch = booth(['batch', input, '--queue', redis.url, '--name', run, '-o', output]);
    // A worker that loses its lock re-runs the question without end: stop looking once it called more than it should.
    const ended = await Promise.race([batch.then(() => true), (async () => {
      for (const deadline = Date.now() + 90_000; server.provider.received.length <= 20 && Date.now() < deadline; ) await sleep(100);
      return false;
    })()]);
    expect(server.provider.received).toHaveLength(20);
    expect(ended).toBe(true);
    expect((await batch).code).toBe(0);
    const [row] = resultsIn(output);
    expect(row).toMatchObject({ id: 0, status: 'UNCERTAIN', agreement: 1 / 20 });
    expect((row?.['attempts'] as Array<{ clusters: unknown[] }>)[0]?.clusters).toHaveLength(20);
    expect(workers[0]!.said()).not.toMatch(/lost its lock/);
    expect(await client.xlen(`booth:run:${run}:finished`)).toBe(1);
    for (const w of await stopped(workers)) expect(w.code, w.stderr).toBe(0);
  }, 150_000);

  it('a worker started with other check flags than the run\'s first worker is refused, naming the flags', async () => {
    const run = newRun();
    const first = await worker(run, ['--threshold', '0.7']);
    const other = await booth(['worker', '--queue', redis.url, '--name', run, ...server.endpoint, '--threshold', '0.8']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(`error: run ${run} is checked with --threshold 0.7, as its first worker was started; this worker has --threshold 0.8.`);
    expect(other.stderr).toContain(`delete booth:run:${run}:settings in Redis`);
    // Flags that mean what the defaults mean are the same flags.
    const same = spawnBooth(['worker', '--queue', redis.url, '--name', run, ...server.endpoint, '--threshold', '0.7', '--confidence-from', 'self']);
    while (!same.said().includes('booth worker: checking run') && same.child.exitCode === null) await sleep(20);
    for (const w of await stopped([same])) expect(w.code, w.stderr).toBe(0);
    for (const w of await stopped([first])) expect(w.code).toBe(0);
  }, 60_000);

  it('run settings in Redis holding terminal escapes and a key no Booth writes: the refusal quotes the values and names only known flags', async () => {
    const run = newRun();
    const hostile = '\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eEVIL';
    await client.set(`booth:run:${run}:settings`, JSON.stringify({ '--model': hostile, '\u001b[32mfake-flag': 1 }));
    const refused = await booth(['worker', '--queue', redis.url, '--name', run, ...server.endpoint]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`error: run ${run} is checked with --model "\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eEVIL", `);
    expect(refused.stderr).toContain('and 1 setting this Booth does not know');
    expect(refused.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/);
    expect(refused.stderr).not.toContain('fake-flag');
  }, 30_000);

  it('a question whose job fails is reported with its reason, and the batch ends with exit 1 once nothing else is left', async () => {
    server.provider.fallback = scriptedModel(5);
    const input = questions(3);
    const output = join(dir(), 'results.jsonl');
    const run = newRun();
    await client.set(`booth:run:${run}:checkpoint:q-1`, 'not json');
    const workers = [await worker(run)];
    const batch = await booth(['batch', input, '--queue', redis.url, '--name', run, '-o', output]);
    expect(batch.code).toBe(1);
    expect(batch.stderr).toContain('warning: question 1 failed in a worker: Booth checkpoint for key "q-1" in redis key booth:run:');
    expect(batch.stderr).toContain('error: 1 question failed in the workers and no other is left to check');
    expect(resultsIn(output).map((r) => r.id).sort()).toEqual([0, 2]);

    // Once the cause is gone, the same command tries it again.
    await client.del(`booth:run:${run}:checkpoint:q-1`);
    const again = await booth(['batch', input, '--queue', redis.url, '--name', run, '-o', output]);
    expect(again.code, again.stderr).toBe(0);
    expect(resultsIn(output).map((r) => r.id).sort()).toEqual([0, 1, 2]);
    for (const w of await stopped(workers)) expect(w.code).toBe(0);
  }, 60_000);
});

describe('booth batch --queue: one writer, one run, one set of questions', () => {
  it('a second batch or --collect on the same output is refused while the first writes it; a lock left by a dead process is taken over', async () => {
    const input = questions(2);
    const output = join(dir(), 'results.jsonl');
    const run = newRun();
    const first = spawnBooth(['batch', input, '--queue', redis.url, '--name', run, '-o', output]);
    while (!first.said().includes('booth batch |')) await sleep(20);
    const second = await booth(['batch', '--queue', redis.url, '--name', run, '--collect', '-o', output]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`error: ${output} is being written by another booth batch (process ${first.child.pid}); wait for it to end, or give -o another file.`);
    first.child.kill('SIGKILL'); // leaves its lock behind
    await first.done;
    server.provider.fallback = scriptedModel(5);
    const workers = [await worker(run)];
    const after = await booth(['batch', '--queue', redis.url, '--name', run, '--collect', '-o', output]);
    expect(after.code, after.stderr).toBe(0);
    expect(resultsIn(output)).toHaveLength(2);
    for (const w of await stopped(workers)) expect(w.code).toBe(0);
  }, 60_000);

  it('a run name used again for other questions is refused before anything is queued; the same questions under ids written otherwise keep the file\'s ids', async () => {
    server.provider.fallback = scriptedModel(5);
    const run = newRun();
    const workers = [await worker(run)];
    const first = join(dir(), 'first.jsonl');
    expect((await booth(['batch', questions(2), '--queue', redis.url, '--name', run, '-o', first])).code).toBe(0);

    const changed = join(dir(), 'changed.jsonl');
    writeFileSync(changed, [{ id: 0, prompt: 'question 0', expected: 'answer 0' }, { id: 1, prompt: 'question 1, reworded', expected: 'answer 1' }].map((q) => JSON.stringify(q)).join('\n'));
    const refused = await booth(['batch', changed, '--queue', redis.url, '--name', run, '-o', join(dir(), 'x.jsonl')]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`error: run ${run} already has question 1 with another prompt or expected answer`);

    const asStrings = join(dir(), 'strings.jsonl');
    writeFileSync(asStrings, [0, 1].map((i) => JSON.stringify({ id: String(i), prompt: `question ${i}`, expected: `answer ${i}` })).join('\n'));
    const calls = server.provider.received.length;
    const output = join(dir(), 'results.jsonl');
    const again = await booth(['batch', asStrings, '--queue', redis.url, '--name', run, '-o', output]);
    expect(again.code, again.stderr).toBe(0);
    expect(resultsIn(output).map((r) => r.id).sort()).toEqual(['0', '1']);
    expect(server.provider.received.length).toBe(calls); // the results in Redis were the answers
    for (const w of await stopped(workers)) expect(w.code).toBe(0);
  }, 60_000);

  it('--collect says when questions have neither a result nor a job, and keeps the failed lines it cannot check again', async () => {
    const input = questions(3);
    const run = newRun();
    const output = join(dir(), 'results.jsonl');
    const queued = spawnBooth(['batch', input, '--queue', redis.url, '--name', run, '-o', output]);
    while (!queued.said().includes('booth batch |')) await sleep(20);
    queued.child.kill('SIGINT');
    expect((await queued.done).code).toBe(130);
    await client.del(...(await client.keys(`booth:queue:${run}:*`))); // as if Redis had lost the jobs

    const collecting = spawnBooth(['batch', '--queue', redis.url, '--name', run, '--collect', '-o', output]);
    for (const deadline = Date.now() + 15_000; !collecting.said().includes('have no result and no job') && Date.now() < deadline; ) await sleep(50);
    collecting.child.kill('SIGINT');
    await collecting.done;
    expect(collecting.said()).toContain('warning: 3 of the run\'s questions have no result and no job in Redis (did it lose its data?); run the batch with its questions file to queue them again');

    // A failed line (every call failed) is kept by --collect: only a batch with the questions checks it again.
    server.provider.fallback = () => ({ status: 500, body: { error: { message: 'down' } } });
    const workers = [await worker(run, ['--max-retries', '0'])];
    expect((await booth(['batch', input, '--queue', redis.url, '--name', run, '-o', output])).code).toBe(3);
    const collected = await booth(['batch', '--queue', redis.url, '--name', run, '--collect', '-o', output]);
    expect(collected.code, collected.stderr).toBe(0);
    expect(collected.stderr).not.toContain('checked again');
    expect(collected.stdout).toContain('questions 3, already done 3, checked now 0');
    for (const w of await stopped(workers)) expect(w.code).toBe(0);
  }, 60_000);

  it('a result in Redis that is not a result line ends the batch naming the key, the field and the fix', async () => {
    const run = newRun();
    await client.hset(`booth:run:${run}:questions`, 'q-0', JSON.stringify({ id: 0, digest: 'x' }));
    await client.hset(`booth:run:${run}:results`, 'q-0', '{"id": 0, "stat');
    await client.xadd(`booth:run:${run}:finished`, '*', 'job', 'q-0');
    const collected = await booth(['batch', '--queue', redis.url, '--name', run, '--collect', '-o', join(dir(), 'x.jsonl')]);
    expect(collected.code).toBe(1);
    expect(collected.stderr).toContain(
      `error: the result of job q-0 in Redis (field q-0 of booth:run:${run}:results) is not a result line: delete that field, and the batch with its questions file checks the question again.`,
    );
  }, 60_000);

  it('a worker whose Redis is gone stops at the second signal, at once', async () => {
    const run = newRun();
    const alone = await worker(run);
    await redis.stop();
    try {
      alone.child.kill('SIGTERM');
      await sleep(200);
      alone.child.kill('SIGTERM');
      const ended = await alone.done;
      expect(ended.code).toBe(130);
      expect(ended.stderr).toContain('booth worker: stopped at once');
    } finally {
      await redis.start();
    }
  }, 60_000);
});

describe('booth batch --queue and booth worker: usage', () => {
  it('bad flags exit 2 naming the flag and the fix, before touching Redis', async () => {
    const input = questions(1);
    const cases: Array<[string[], string]> = [
      [['batch', input, '--queue', redis.url, '-o', 'x.jsonl'], "error: option '--queue <url>' needs --name <run>"],
      [['batch', input, '--queue', redis.url, '--name', 'r', '-o', 'x.jsonl', '--threshold', '0.8', ...server.endpoint], 'give --base-url, --model, --threshold to booth worker instead'],
      [['batch', input, '--name', 'r', '-o', 'x.jsonl', ...server.endpoint], "error: option '--name' goes with --queue <url>"],
      [['batch', input, '-o', 'x.jsonl'], "error: required option '--base-url <url>' not specified"],
      [['batch', '--queue', redis.url, '--name', 'r', '-o', 'x.jsonl'], "error: missing required argument 'questions' (or --collect"],
      [['batch', input, '--queue', 'http://127.0.0.1:6379', '--name', 'r', '-o', 'x.jsonl'], 'expected a Redis URL such as redis://127.0.0.1:6379/0'],
      [['worker', '--queue', 'http://:s3cret@127.0.0.1:6379', '--name', 'r', ...server.endpoint], "argument 'http://:***@127.0.0.1:6379' is invalid"],
      [['batch', input, '--queue', redis.url, '--name', 'run:1', '-o', 'x.jsonl'], 'expected a name of letters, digits'],
      [['worker', '--queue', redis.url, '--name', 'r', ...server.endpoint, '--rate', 'fast'], 'expected a rate such as 10/s, 300/m or 1000/h'],
      [['worker', '--queue', redis.url, ...server.endpoint], "error: required option '--name <run>' not specified"],
    ];
    for (const [args, message] of cases) {
      const run = await booth(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toContain(message);
      expect(run.stderr).not.toContain('s3cret');
    }
  }, 120_000);

  /**
   * How long this machine takes to start `booth` and parse its flags, loading neither BullMQ nor
   * ioredis: a bad --queue URL is refused before that. Seconds when the machine is loaded.
   */
  const startup = async () => {
    const control = await booth(['batch', questions(1), '--queue', 'http://127.0.0.1:1', '--name', 'r', '-o', join(dir(), 'x.jsonl')]);
    expect(control.code).toBe(2);
    return control.ms;
  };

  it('a Redis that refuses the connection is exit 1 at once, naming the URL without its password', async () => {
    const port = await closedPort();
    const closed = `redis://:secret@127.0.0.1:${port}/0`;
    for (const args of [['batch', questions(1), '--queue', closed, '--name', 'r', '-o', join(dir(), 'x.jsonl')], ['worker', '--queue', closed, '--name', 'r', ...server.endpoint]]) {
      const started = await startup();
      const run = await booth(args);
      console.log(`booth ${args[0]} against a closed port: exit ${run.code} after ${Math.round(run.ms)} ms; starting booth takes ${Math.round(started)} ms here`);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        `error: cannot reach Redis at redis://:***@127.0.0.1:${port}/0 (--queue): connect ECONNREFUSED 127.0.0.1:${port}. Start redis-server there, or give --queue the right address.`,
      );
      expect(run.stderr).not.toContain('secret');
      // A refusal is final, so it is reported at once: past starting the command, only loading
      // BullMQ is left (up to 2 s on a loaded 2-core machine, where starting booth takes 3-5 s).
      // It was 7 s more: 5 s waiting for an answer, 2 s for ioredis to let go.
      expect(run.ms - started).toBeLessThan(3_500);
    }
  }, 60_000);

  it('a Redis that accepts the connection but never answers is reported once 5 s have passed since the command started', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const started = await startup();
      const run = await booth(['batch', questions(1), '--queue', `redis://127.0.0.1:${port}/0`, '--name', 'r', '-o', join(dir(), 'x.jsonl')]);
      console.log(`booth batch against a silent port: exit ${run.code} after ${Math.round(run.ms)} ms; starting booth takes ${Math.round(started)} ms here`);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(new RegExp(`error: cannot reach Redis at redis://127\\.0\\.0\\.1:${port}/0 \\(--queue\\): no answer in \\d\\.\\d s\\. Start redis-server there`));
      // 5 s from the process's start (or 1 s after a start slower than 4 s), then the exit; it
      // was 7 s past loading BullMQ: 5 s of waiting, 2 s for ioredis to let go.
      expect(run.ms).toBeLessThan(Math.max(5_000, started + 1_000) + 2_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  }, 60_000);

  it('a password or a database that Redis refuses is exit 1 naming the reason, not a wait for ever nor database 0', async () => {
    await client.call('ACL', 'SETUSER', 'booth-probe', 'on', '>right', '~*', '&*', '+@all');
    const cases: Array<[string, string]> = [
      [`redis://booth-probe:wrong@127.0.0.1:${redis.port}/0`, 'WRONGPASS'],
      [`redis://127.0.0.1:${redis.port}/99`, 'ERR DB index is out of range'],
    ];
    for (const [url, reason] of cases) {
      const name = newRun();
      const started = performance.now();
      const run = await booth(['batch', questions(1), '--queue', url, '--name', name, '-o', join(dir(), 'x.jsonl')], (child) => {
        if (performance.now() - started > 15_000) child.kill('SIGKILL');
      });
      expect(run.code, url).toBe(1);
      expect(run.stderr, url).toContain(`(--queue) refused it: ${reason}`);
      expect(run.stderr, url).not.toContain(':wrong@');
      expect(await client.exists(`booth:run:${name}:questions`), url).toBe(0);
    }
    await client.call('ACL', 'DELUSER', 'booth-probe');
  }, 60_000);
});
