import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelope } from '../fixtures/helpers.js';
import { batchFiles, booth, dir, questionNumber, resultsIn, spawnBooth, useProvider } from '../fixtures/booth-process.js';
import { type RedisServer, startRedis } from '../fixtures/redis-server.js';

// Issue 27, "runs know what they ran with": every line `booth batch` writes records the model,
// the endpoint's host, Booth's version and the settings, and a rerun into an output made
// otherwise is refused before any call, or with --rerun-changed checks those questions again.

const server = useProvider();
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Question i answered "answer i", confident. */
const answering = () => (body: Record<string, unknown>) => ({ text: envelope(`answer ${questionNumber(body)}`, 0.9) });

/** The file's lines as they are now: a refused rerun leaves them byte for byte. */
const textOf = (file: string) => readFileSync(file, 'utf8');

/** Questions `ids` of the "question i" kind, in a file of their own. */
function questionsFile(ids: readonly number[]): string {
  const file = join(dir(), 'questions.jsonl');
  writeFileSync(file, ids.map((i) => JSON.stringify({ id: i, prompt: `question ${i}` })).join('\n'));
  return file;
}

/** The numbers of the questions the provider was asked since `from`. */
const askedSince = (from: number) => new Set(server.provider.received.slice(from).map((r) => questionNumber(r.body)));

describe('what a result line records', () => {
  it('every line has the model, the host and port alone, Booth\'s version and the settings: no key, path or query of the base URL', async () => {
    server.provider.fallback = answering();
    const { input, output } = batchFiles(3);
    const baseUrl = `${server.provider.url}/v1?api-key=sk-secret-in-query`;
    const run = await booth(['batch', input, '-o', output, '--base-url', baseUrl, '--model', 'test-model', '--temperature', '0.2', '--seed', '7']);
    expect(run.code, run.stderr).toBe(0);
    const rows = resultsIn(output);
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row['run']).toEqual({
        booth: VERSION,
        model: 'test-model',
        host: new URL(server.provider.url).host,
        schema: null,
        system: null,
        temperature: 0.2,
        seed: 7,
      });
      expect(row['settings']).toMatchObject({ threshold: 0.7, maxRetries: 1, samples: 1, confidenceFrom: 'self', schema: false });
    }
    const text = textOf(output);
    for (const secret of ['sk-secret-in-query', 'api-key', '/v1']) expect(text).not.toContain(secret);
  }, 30_000);

  it('a base URL with a user and password is refused before any call, naming neither, and writes no line', async () => {
    const { input, output } = batchFiles(2);
    const url = new URL(server.provider.url);
    const run = await booth(['batch', input, '-o', output, '--base-url', `http://user:sk-secret-password@${url.host}/v1`, '--model', 'test-model']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).not.toContain('sk-secret-password');
    expect(run.stderr).toContain('without a user name or password');
    expect(server.provider.received).toHaveLength(0);
    expect(() => readFileSync(output)).toThrow(/ENOENT/);
  }, 30_000);

  it('--system reaches the model from a batch; the line holds its digest, never its text, and the schema by its digest', async () => {
    server.provider.fallback = (body) => ({ text: envelope({ city: `city ${questionNumber(body)}` }, 0.9) });
    const { input, output } = batchFiles(2);
    const schema = join(dir(), 'schema.json');
    writeFileSync(schema, '{ "type": "object", "properties": { "city": { "type": "string" } }, "required": ["city"] }');
    const system = 'You are the secret help desk of Acme.';
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--system', system, '--schema', schema, '--samples', '2']);
    expect(run.code, run.stderr).toBe(0);
    const systems = server.provider.received.map((r) => (r.body['messages'] as Array<{ role: string; content: string }>)[0]?.content ?? '');
    expect(systems.length).toBeGreaterThan(0);
    for (const content of systems) expect(content.startsWith(`${system}\n\n`)).toBe(true);
    const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
    for (const row of resultsIn(output)) {
      // Sampled: every call is a sample's, sent temperature 1 and seeds from 0.
      expect(row['run']).toMatchObject({ system: sha(system), schema: sha(JSON.stringify(JSON.parse(textOf(schema)))), temperature: 1, seed: 0 });
    }
    expect(textOf(output)).not.toContain('secret help desk');
  }, 30_000);
});

describe('a rerun into an output made otherwise', () => {
  it('another --threshold is refused with exit 2 before any call, naming the old and new value and --rerun-changed', async () => {
    server.provider.fallback = answering();
    const { input, output } = batchFiles(3);
    expect((await booth(['batch', input, '-o', output, ...server.endpoint])).code).toBe(0);
    const before = textOf(output);
    server.provider.received.length = 0;
    const rerun = await booth(['batch', input, '-o', output, ...server.endpoint, '--threshold', '0.99']);
    expect(rerun.code).toBe(2);
    expect(rerun.stderr).toContain(`error: ${output} holds results of 3 questions made with other settings than this run's: --threshold 0.7 → 0.99 (3 lines).`);
    expect(rerun.stderr).toContain('--rerun-changed to check those questions again with the new settings');
    expect(server.provider.received).toHaveLength(0);
    expect(textOf(output)).toBe(before);
  }, 30_000);

  it('another --model is refused likewise; a --system that changed is named by its digest, never its text', async () => {
    server.provider.fallback = answering();
    const { input, output } = batchFiles(2);
    expect((await booth(['batch', input, '-o', output, ...server.endpoint, '--system', 'old secret prompt'])).code).toBe(0);
    server.provider.received.length = 0;
    const endpoint = ['--base-url', `${server.provider.url}/v1`, '--model', 'other-model'];
    const rerun = await booth(['batch', input, '-o', output, ...endpoint, '--system', 'new secret prompt']);
    expect(rerun.code).toBe(2);
    expect(rerun.stderr).toContain('--model "test-model" → "other-model" (2 lines)');
    expect(rerun.stderr).toMatch(/the system prompt \(--system, --system-file\) sha256:[0-9a-f]{12}… → sha256:[0-9a-f]{12}… \(2 lines\)/);
    expect(rerun.stderr).not.toContain('secret prompt');
    expect(rerun.stderr).toContain('--rerun-changed');
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);

  it('--rerun-changed checks exactly the questions made otherwise, and the output keeps one line per question, each with the new settings', async () => {
    server.provider.fallback = answering();
    const output = join(dir(), 'results.jsonl');
    // Questions 0 and 1 at 0.99, then 2 and 3 at 0.7 (a rerun compares only the lines of its own questions).
    expect((await booth(['batch', questionsFile([0, 1]), '-o', output, ...server.endpoint, '--threshold', '0.99'])).code).toBe(0);
    expect((await booth(['batch', questionsFile([2, 3]), '-o', output, ...server.endpoint])).code).toBe(0);
    const all = questionsFile([0, 1, 2, 3, 4]);
    const refused = await booth(['batch', all, '-o', output, ...server.endpoint]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('results of 2 questions made with other settings than this run\'s: --threshold 0.99 → 0.7 (2 lines)');

    const from = server.provider.received.length;
    const rerun = await booth(['batch', all, '-o', output, ...server.endpoint, '--rerun-changed']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toContain("2 questions made with other settings are checked again with this run's (--rerun-changed); their lines are replaced");
    expect(askedSince(from)).toEqual(new Set([0, 1, 4]));
    expect(rerun.stdout).toContain('questions 5, already done 2, checked now 3');
    const rows = resultsIn(output);
    expect(rows.map((r) => r.id).sort()).toEqual([0, 1, 2, 3, 4]);
    for (const row of rows) expect((row['settings'] as { threshold: number }).threshold).toBe(0.7);
    // The rewrite went through a temporary file, renamed over the output: none is left beside it.
    expect(readdirSync(dirname(output)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  }, 60_000);

  it('an unchanged rerun still says nothing is left to check, and calls nothing', async () => {
    server.provider.fallback = answering();
    const { input, output } = batchFiles(3);
    const flags = ['--threshold', '0.8', '--samples', '2', '--seed', '3'];
    expect((await booth(['batch', input, '-o', output, ...server.endpoint, ...flags])).code).toBe(0);
    server.provider.received.length = 0;
    // --confidence-from hybrid is what --samples 2 means without it: the same settings.
    const rerun = await booth(['batch', input, '-o', output, ...server.endpoint, ...flags, '--confidence-from', 'hybrid', '--rerun-changed']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stdout).toContain(`nothing left to check: every question already has a result in ${output}`);
    expect(rerun.stderr).not.toContain('checked again');
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);

  it('lines of an older Booth, without `run`, are taken as they are: refused only on a setting they do record', async () => {
    server.provider.fallback = answering();
    const { input, output } = batchFiles(2);
    expect((await booth(['batch', input, '-o', output, ...server.endpoint])).code).toBe(0);
    // As a Booth before this one wrote them: no `run`, and no `booth` version.
    writeFileSync(output, resultsIn(output).map(({ run: _run, ...row }) => `${JSON.stringify(row)}\n`).join(''));
    server.provider.received.length = 0;
    const endpoint = ['--base-url', `${server.provider.url}/v1`, '--model', 'another-model'];
    const kept = await booth(['batch', input, '-o', output, ...endpoint]);
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stderr).toContain(`2 result lines of ${output} do not record the model, endpoint or temperature (written by an older Booth): kept as they are`);
    expect(kept.stdout).toContain('nothing left to check');
    const refused = await booth(['batch', input, '-o', output, ...endpoint, '--max-retries', '3']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--max-retries 1 → 3 (2 lines)');
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);

  it('a line whose `run` is not what Booth writes ends the rerun naming the line and the field, never its value, before any call', async () => {
    server.provider.fallback = answering();
    const { input, output } = batchFiles(2);
    expect((await booth(['batch', input, '-o', output, ...server.endpoint])).code).toBe(0);
    const rows = resultsIn(output);
    (rows[1] as unknown as { run: Record<string, unknown> }).run['model'] = { injected: '\u001b[31mred' };
    writeFileSync(output, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
    server.provider.received.length = 0;
    const rerun = await booth(['batch', input, '-o', output, ...server.endpoint]);
    expect(rerun.code).toBe(1);
    expect(rerun.stderr).toContain(`error: ${output}:2: its run.model is an object, expected a string, which Booth never writes; fix or delete that line`);
    expect(rerun.stderr).not.toContain('injected');
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);

  it('a model name read from the output is shown quoted, escaped and cut to 80 characters', async () => {
    server.provider.fallback = answering();
    const { input, output } = batchFiles(1);
    expect((await booth(['batch', input, '-o', output, ...server.endpoint])).code).toBe(0);
    const [row] = resultsIn(output);
    (row as unknown as { run: Record<string, unknown> }).run['model'] = `\u001b[2J${'m'.repeat(500)}`;
    writeFileSync(output, `${JSON.stringify(row)}\n`);
    const rerun = await booth(['batch', input, '-o', output, ...server.endpoint]);
    expect(rerun.code).toBe(2);
    expect(rerun.stderr).toContain(`--model "\\u001b[2J${'m'.repeat(68)}…" → "test-model" (1 line)`);
    expect(rerun.stderr).not.toContain('\u001b');
  }, 30_000);

  it('--rerun-changed with --queue is bad usage: a queued run is checked with its first worker\'s flags', async () => {
    const { input, output } = batchFiles(1);
    const run = await booth(['batch', input, '-o', output, '--queue', 'redis://127.0.0.1:1/0', '--name', 'r', '--rerun-changed']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("error: option '--rerun-changed' goes without --queue");
  }, 30_000);
});

describe('the lines of a queued batch', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  }, 30_000);
  afterAll(() => redis.close());

  it('carry the same record as a local batch\'s, from the worker\'s flags; the worker sends --system', async () => {
    server.provider.fallback = answering();
    const { input, output } = batchFiles(3);
    const flags = ['--system', 'Be brief.', '--temperature', '0'];
    const worker = spawnBooth(['worker', '--queue', redis.url, '--name', 'recorded', ...server.endpoint, ...flags, '--lock-ms', '2000']);
    try {
      for (const deadline = Date.now() + 20_000; !worker.said().includes('booth worker: checking run'); await sleep(20)) {
        if (worker.child.exitCode !== null || Date.now() > deadline) throw new Error(`worker did not start: ${worker.said()}`);
      }
      const batch = await booth(['batch', input, '--queue', redis.url, '--name', 'recorded', '-o', output]);
      expect(batch.code, batch.stderr).toBe(0);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.done;
    }
    const local = join(dir(), 'local.jsonl');
    expect((await booth(['batch', input, '-o', local, ...server.endpoint, ...flags])).code).toBe(0);
    const runs = [...resultsIn(output), ...resultsIn(local)].map((row) => row['run']);
    expect(runs).toHaveLength(6);
    for (const run of runs) expect(run).toEqual(resultsIn(local)[0]?.['run']);
    expect(runs[0]).toMatchObject({ booth: VERSION, model: 'test-model', host: new URL(server.provider.url).host, temperature: 0 });
    for (const r of server.provider.received) expect((r.body['messages'] as Array<{ content: string }>)[0]?.content).toMatch(/^Be brief\.\n\n/);
  }, 60_000);

  it('a worker with another system prompt, temperature or seed than the run\'s first is refused, the prompt named by its digest; a run whose settings an older Booth wrote is joined', async () => {
    const client = new Redis(redis.url);
    try {
      // As a Booth before --system, --temperature and --seed were shared wrote a run's settings.
      const older = { '--model': 'test-model', '--threshold': 0.7, '--max-retries': 1, '--timeout-ms': null, '--call-retries': 0, '--samples': 1, '--confidence-from': 'self', '--schema': null };
      await client.set('booth:run:older:settings', JSON.stringify(older));
      const joined = spawnBooth(['worker', '--queue', redis.url, '--name', 'older', ...server.endpoint]);
      for (const deadline = Date.now() + 20_000; !joined.said().includes('booth worker: checking run'); await sleep(20)) {
        if (joined.child.exitCode !== null || Date.now() > deadline) throw new Error(`worker did not join: ${joined.said()}`);
      }
      const refused = await booth(['worker', '--queue', redis.url, '--name', 'older', ...server.endpoint, '--system', 'secret house rules', '--seed', '4']);
      joined.child.kill('SIGTERM');
      expect((await joined.done).code).toBe(0);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('run older is checked with --system (not given), --seed (not given), as its first worker was started;');
      expect(refused.stderr).toMatch(/this worker has --system "sha256:[0-9a-f]{64}", --seed 4\./);
      expect(refused.stderr).not.toContain('secret house rules');
    } finally {
      client.disconnect();
    }
  }, 60_000);
});
