import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelope } from '../fixtures/helpers.js';
import { booth, dir, linesIn, resultsIn, spawnBooth, useProvider } from '../fixtures/booth-process.js';
import { type RedisServer, startRedis } from '../fixtures/redis-server.js';
import { jobIdOf } from '../../src/cli/queue/queue.js';

// How fast a queued batch gets over a worker that dies, with the workers' default --lock-ms,
// and what its progress line says meanwhile: real `booth worker` processes, one SIGKILLed, on a
// redis-server of this file's own. The numbers measured are printed (docs/scaling-out.md quotes them).

const server = useProvider();
let redis: RedisServer;
let client: Redis;
let runs = 0;
const started: ChildProcess[] = [];

beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url, { maxRetriesPerRequest: null });
}, 30_000);

afterAll(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  client.disconnect();
  await redis.close();
});

const newRun = () => `recovery-${++runs}`;

function questions(count: number): string {
  const file = join(dir(), 'questions.jsonl');
  writeFileSync(file, Array.from({ length: count }, (_, i) => JSON.stringify({ id: i, prompt: `question ${i}` })).join('\n'));
  return file;
}

type Worker = ReturnType<typeof spawnBooth>;

/** A `booth worker` of `run` with the default lock, once it takes jobs; `label` marks its calls' paths. */
async function worker(run: string, label: string, flags: string[] = []): Promise<Worker> {
  const endpoint = ['--base-url', `${server.provider.url}/${label}/v1`, '--model', 'test-model'];
  const spawned = spawnBooth(['worker', '--queue', redis.url, '--name', run, ...endpoint, '--concurrency', '4', ...flags]);
  started.push(spawned.child);
  for (const deadline = Date.now() + 30_000; !spawned.said().includes('booth worker: checking run'); await sleep(20)) {
    if (spawned.child.exitCode !== null || Date.now() > deadline) throw new Error(`worker did not start: ${spawned.said()}`);
  }
  return spawned;
}

async function stopped(workers: readonly Worker[]): Promise<void> {
  for (const { child } of workers) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  for (const w of workers) expect((await w.done).code, w.said()).toBe(0);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

describe('a worker that dies, with the default --lock-ms', () => {
  it('50 questions over two workers, one SIGKILLed mid-run: its questions are re-queued within seconds, and the progress line says so meanwhile', async () => {
    server.provider.fallback = () => ({ text: envelope('yes', 0.9), delayMs: 300 });
    const input = questions(50);

    // The same batch without a kill: what the work itself takes here.
    const calm = newRun();
    const calmWorkers = await Promise.all([worker(calm, 'a'), worker(calm, 'b')]);
    const uninterrupted = await booth(['batch', input, '--queue', redis.url, '--name', calm, '-o', join(dir(), 'calm.jsonl')]);
    expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
    await stopped(calmWorkers);

    const run = newRun();
    const [killed, survivor] = await Promise.all([worker(run, 'killed'), worker(run, 'survivor')]);
    const output = join(dir(), 'results.jsonl');
    let killedAt = 0;
    const batch = await booth(['batch', input, '--queue', redis.url, '--name', run, '-o', output], () => {
      if (killedAt > 0 || linesIn(output) < 12) return;
      // Killed while it holds questions: calls it sent less than a reply's time ago are unanswered.
      const now = performance.now();
      if (!server.provider.received.some((r) => r.path.startsWith('/killed/') && now - r.at < 250)) return;
      killed!.child.kill('SIGKILL');
      killedAt = now;
    });
    const afterKill = performance.now() - killedAt;
    expect(batch.code, batch.stderr).toBe(0);
    expect(killedAt).toBeGreaterThan(0);
    console.log(
      `recovery with the default --lock-ms: the batch took ${seconds(batch.ms)} with a worker SIGKILLed mid-run, ` +
        `${seconds(afterKill)} of it after the kill; ${seconds(uninterrupted.ms)} without a kill`,
    );
    const rows = resultsIn(output);
    expect(rows).toHaveLength(50);
    expect(new Set(rows.map((r) => r.id)).size).toBe(50);
    // BullMQ's defaults (a 30 s lock, looked for every 30 s) took up to a minute here; generous for a loaded machine.
    expect(afterKill).toBeLessThan(15_000);
    // Meanwhile the progress line named the questions waiting on the dead worker's lock, and how long they would wait.
    const said = /(\d+) held by a worker that stopped answering; re-queued in ≤ (\d+) s/.exec(batch.stderr);
    expect(said, batch.stderr).not.toBeNull();
    console.log(batch.stderr.split('\n').find((line) => line.includes('held by a worker')));
    expect(Number(said?.[1])).toBeGreaterThan(0);
    expect(Number(said?.[2])).toBeLessThanOrEqual(6); // the default lock (5 s) and one stalled-job check (1 s)
    await stopped([survivor!]);
  }, 180_000);

  it('a check far longer than the lock keeps it: the lock is renewed while the call runs, and no other worker runs the check again', async () => {
    // One call of 12 s, over twice the default lock (5 s), with another worker idle and ready to take it over.
    server.provider.fallback = () => ({ text: envelope('yes', 0.9), delayMs: 12_000 });
    const run = newRun();
    const workers = await Promise.all([worker(run, 'first'), worker(run, 'second')]);
    const output = join(dir(), 'results.jsonl');
    const batch = await booth(['batch', questions(1), '--queue', redis.url, '--name', run, '-o', output]);
    expect(batch.code, batch.stderr).toBe(0);
    expect(server.provider.received).toHaveLength(1);
    expect(batch.stderr).not.toContain('held by a worker');
    expect(resultsIn(output)).toMatchObject([{ id: 0, status: 'VERIFIED' }]);
    expect(await client.xlen(`booth:run:${run}:finished`)).toBe(1);
    for (const w of workers) expect(w.said()).not.toMatch(/lost its lock/);
    await stopped(workers);
  }, 120_000);

  it('with no worker left to re-queue them, the progress line says so; a worker started then finishes the batch', async () => {
    server.provider.fallback = () => ({ text: envelope('yes', 0.9), delayMs: 60_000 });
    const run = newRun();
    // Redis is shared: timings that no worker wrote are passed over, not trusted.
    await client.hset(`booth:run:${run}:workers`, 'not-a-worker', '{"lockMs":"soon"}', 'nor-this', 'null');
    const alone = await worker(run, 'alone', ['--lock-ms', '1000']);
    const output = join(dir(), 'results.jsonl');
    const batch = spawnBooth(['batch', questions(2), '--queue', redis.url, '--name', run, '-o', output]);
    started.push(batch.child);
    while (server.provider.received.length < 2) await sleep(20);
    alone.child.kill('SIGKILL');
    for (const deadline = Date.now() + 30_000; !batch.said().includes('no running worker re-queues them') && Date.now() < deadline; ) await sleep(100);
    expect(batch.said()).toContain('2 held by a worker that stopped answering, and no running worker re-queues them: start a booth worker');
    server.provider.fallback = () => ({ text: envelope('yes', 0.9) });
    const rescuer = await worker(run, 'rescuer');
    const ended = await batch.done;
    expect(ended.code, ended.stderr).toBe(0);
    expect(resultsIn(output)).toHaveLength(2);
    await stopped([rescuer]);
  }, 120_000);
});

/** A `booth batch --queue` of `run` with no worker, once its progress bar is up; its output file is fresh. */
async function waitingBatch(run: string, count: number): Promise<Worker> {
  const batch = spawnBooth(['batch', questions(count), '--queue', redis.url, '--name', run, '-o', join(dir(), 'results.jsonl')]);
  started.push(batch.child);
  for (const deadline = Date.now() + 30_000; !batch.said().includes('booth batch |'); await sleep(20)) {
    if (batch.child.exitCode !== null || Date.now() > deadline) throw new Error(`batch did not start: ${batch.said()}`);
  }
  return batch;
}

describe('booth:run:<run>:workers, the hash of worker lock timings, as Redis may hold it', () => {
  it('200 000 entries: the waiting batch reads them every second without overflowing the stack', async () => {
    const run = newRun();
    const timing = JSON.stringify({ lockMs: 5000, renewMs: 1000, stalledMs: 1000 });
    for (let start = 0; start < 200_000; start += 10_000) {
      await client.hset(`booth:run:${run}:workers`, Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`w${start + i}`, timing])));
    }
    const batch = await waitingBatch(run, 2);
    // Several looks at the held questions, each reading the whole hash.
    await sleep(4_000);
    expect(batch.child.exitCode, batch.said()).toBeNull();
    batch.child.kill('SIGINT');
    const ended = await batch.done;
    expect(ended.code, ended.stderr).toBe(130);
    expect(ended.stderr).not.toContain('Maximum call stack');
  }, 90_000);

  it('a SIGKILLed worker\'s entry, and entries no worker wrote, are removed by the next worker within four of their locks', async () => {
    const run = newRun();
    const key = `booth:run:${run}:workers`;
    await client.hset(key, 'not-a-worker', 'null', 'infinite', '{"lockMs":1e999,"renewMs":1,"stalledMs":1,"at":1}');
    const killed = await worker(run, 'killed', ['--lock-ms', '1000']);
    const [killedId] = Object.keys(await client.hgetall(key));
    expect(Object.keys(await client.hgetall(key))).toHaveLength(1);
    killed.child.kill('SIGKILL');
    await killed.done;
    expect(Object.keys(await client.hgetall(key))).toEqual([killedId]);
    const next = await worker(run, 'next', ['--lock-ms', '1000']);
    // The killed worker's last rewrite was at most a lock before the kill: gone by four locks after it, and a rewrite later.
    for (const deadline = Date.now() + 15_000; (await client.hexists(key, killedId as string)) === 1 && Date.now() < deadline; ) await sleep(200);
    const left = await client.hgetall(key);
    expect(Object.keys(left)).toHaveLength(1);
    expect(Object.keys(left)).not.toContain(killedId);
    expect(JSON.parse(Object.values(left)[0] as string)).toMatchObject({ lockMs: 1000, renewMs: 200, stalledMs: 200, at: expect.any(Number) });
    await stopped([next]);
    // A worker that stops says so itself.
    expect(await client.exists(key)).toBe(0);
  }, 90_000);

  it('a key that is not a hash: the waiting batch fails naming the key and the fix, not with Redis\'s bare WRONGTYPE', async () => {
    const run = newRun();
    const key = `booth:run:${run}:workers`;
    await client.set(key, 'not a hash');
    const batch = await booth(['batch', questions(1), '--queue', redis.url, '--name', run, '-o', join(dir(), 'results.jsonl')]);
    expect(batch.code, batch.stderr).toBe(1);
    expect(batch.stderr).toContain(`error: run ${run}: ${key} in Redis is not a hash of the run's workers`);
    expect(batch.stderr).toContain('delete it in Redis and start the workers again');
    expect(batch.stderr).not.toContain('WRONGTYPE');
  }, 60_000);

  it('a key that is not a hash: the worker exits 1 naming the key and the fix, and takes none of the jobs queued', async () => {
    const run = newRun();
    const key = `booth:run:${run}:workers`;
    const queued = await waitingBatch(run, 1);
    queued.child.kill('SIGINT');
    expect((await queued.done).code).toBe(130);
    await client.set(key, 'not a hash');
    server.provider.received.length = 0;
    const alone = spawnBooth(['worker', '--queue', redis.url, '--name', run, '--base-url', `${server.provider.url}/alone/v1`, '--model', 'test-model']);
    started.push(alone.child);
    const timer = setTimeout(() => alone.child.kill('SIGKILL'), 20_000);
    const ended = await alone.done;
    clearTimeout(timer);
    expect(ended.signal, `still running after 20 s: ${ended.stderr}`).toBeNull();
    expect(ended.code, ended.stderr).toBe(1);
    expect(ended.stderr).toContain(`error: run ${run}: ${key} in Redis is not a hash of the run's workers`);
    expect(server.provider.received).toHaveLength(0);
    expect(await client.hlen(`booth:run:${run}:results`)).toBe(0);
  }, 90_000);

  it('timings no worker can have (Infinity from 1e999, over an hour) are passed over: the progress line never says "≤ Infinity s"', async () => {
    const run = newRun();
    await client.hset(
      `booth:run:${run}:workers`,
      'infinite',
      '{"lockMs":1,"renewMs":1,"stalledMs":1e999}',
      'two-hours',
      JSON.stringify({ lockMs: 7_200_000, renewMs: 1_440_000, stalledMs: 1_440_000 }),
    );
    const batch = await waitingBatch(run, 2);
    // One question active with no lock, as if its worker died and its lock lapsed.
    const jobId = jobIdOf(0);
    await client.lrem(`booth:queue:${run}:wait`, 0, jobId);
    await client.lpush(`booth:queue:${run}:active`, jobId);
    // With the default check interval (1 s) and a late timer's second, the question is soon no running worker's.
    for (const deadline = Date.now() + 30_000; !batch.said().includes('no running worker re-queues it') && Date.now() < deadline; ) await sleep(100);
    batch.child.kill('SIGINT');
    const ended = await batch.done;
    expect(ended.stderr).toContain('1 held by a worker that stopped answering, and no running worker re-queues it: start a booth worker');
    expect(ended.stderr).not.toMatch(/Infinity|re-queued in ≤ \d{3,} s/);
  }, 90_000);
});
