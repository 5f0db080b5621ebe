import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { acheck, CheckpointError, fileStore, memoryStore } from '../src/index.js';
import { decided, envelope } from './helpers.js';

const QUESTION = 'Which city is the capital of France?';
const REPLIES = [envelope('Lyon', 0.1), envelope('Marseille', 0.3), envelope('Paris', 0.9)];
const scriptedCall = async (_prompt: string, { attempt }: { attempt: number }) => REPLIES[attempt] ?? '';

/** The same run, never interrupted and never saved. */
const uninterrupted = () => acheck(scriptedCall, QUESTION, { maxRetries: 2 });

describe('durable checks in one process', () => {
  it('resume where a run stopped: finished attempts are neither repeated nor reported again', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    const calls: number[] = [];
    const reported: number[] = [];
    const options = { maxRetries: 2, checkpoint: store, key: 'run-1', onAttempt: (index: number) => void reported.push(index) };

    const interrupted = acheck(
      async (prompt, info) => {
        calls.push(info.attempt);
        if (info.attempt === 1) controller.abort(new Error('process going down'));
        return scriptedCall(prompt, info);
      },
      QUESTION,
      { ...options, signal: controller.signal },
    );
    await expect(interrupted).rejects.toThrow('process going down');
    expect(store.size).toBe(1);

    const resumed = await acheck(
      async (prompt, info) => {
        calls.push(info.attempt);
        return scriptedCall(prompt, info);
      },
      QUESTION,
      options,
    );
    expect(calls).toEqual([0, 1, 1, 2]); // only the call in flight is made again
    expect(reported).toEqual([0, 1, 2]);
    expect(decided(resumed)).toEqual(decided(await uninterrupted()));
    expect(store.size).toBe(0); // deleted on completion
  });

  it('a checkpoint of another run is an error naming the key, never a silent restart', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    await acheck(
      async (prompt, info) => {
        if (info.attempt === 1) controller.abort();
        return scriptedCall(prompt, info);
      },
      QUESTION,
      { checkpoint: store, key: 'k', signal: controller.signal, maxRetries: 2 },
    ).catch(() => {});
    expect(store.size).toBe(1);
    const callFn = vi.fn(scriptedCall);
    await expect(acheck(callFn, 'another question', { checkpoint: store, key: 'k', maxRetries: 2 })).rejects.toThrow(
      /checkpoint for key "k" belongs to a different run: its prompt/,
    );
    await expect(acheck(callFn, QUESTION, { checkpoint: store, key: 'k', maxRetries: 5 })).rejects.toBeInstanceOf(CheckpointError);
    await expect(acheck(callFn, QUESTION, { checkpoint: store, key: 'k', maxRetries: 2, timeoutMs: 5_000 })).rejects.toThrow(
      /its timeoutMs is null, this call's is 5000/,
    );
    expect(callFn).not.toHaveBeenCalled();
  });
});

describe('fileStore', () => {
  const directory = () => mkdtempSync(join(tmpdir(), 'booth-store-'));

  it('writes one JSON file per key, atomically, and deletes it', async () => {
    const dir = directory();
    const store = fileStore(dir);
    const checkpoint = { format: 'booth.checkpoint', version: 1, key: 'a/b c', snapshot: { n: 1 } } as const;
    await store.save('a/b c', checkpoint);
    expect(readdirSync(dir)).toEqual(['a%2Fb%20c.json']);
    expect(await store.load('a/b c')).toEqual(checkpoint);
    await store.save('a/b c', { ...checkpoint, snapshot: { n: 2 } });
    expect(readdirSync(dir)).toEqual(['a%2Fb%20c.json']); // no temporary file left behind
    await store.delete('a/b c');
    expect(readdirSync(dir)).toEqual([]);
    expect(await store.load('a/b c')).toBeUndefined();
  });

  it('a corrupt file is an error naming the key and the file', async () => {
    const dir = directory();
    writeFileSync(join(dir, 'run-7.json'), '{"format": "booth.checkpoint", "snap');
    const run = acheck(scriptedCall, QUESTION, { checkpoint: fileStore(dir), key: 'run-7' });
    await expect(run).rejects.toBeInstanceOf(CheckpointError);
    await expect(run).rejects.toThrow(`Booth checkpoint for key "run-7" in ${join(dir, 'run-7.json')} is corrupt`);
  });

  it('a foreign file is an error naming the key and the file', async () => {
    const dir = directory();
    writeFileSync(join(dir, 'run-8.json'), JSON.stringify({ hello: 'world' }));
    await expect(acheck(scriptedCall, QUESTION, { checkpoint: fileStore(dir), key: 'run-8' })).rejects.toThrow(
      `Booth checkpoint for key "run-8" in ${join(dir, 'run-8.json')} is not a Booth checkpoint`,
    );
  });
});

const CHILD = fileURLToPath(new URL('./fixtures/durable-child.ts', import.meta.url));

/** Runs the child; with `killOn`, SIGKILLs it as soon as it prints that line. */
function runChild(args: string[], killOn?: string): Promise<{ stdout: string; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk;
      if (killOn && stdout.split('\n').includes(killOn)) child.kill('SIGKILL');
    });
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0 && signal !== 'SIGKILL') reject(new Error(`child failed (${code}): ${stderr}`));
      else resolve({ stdout, signal });
    });
  });
}

// Left out of `npm run mutate` (vitest.mutate.config.ts sets BOOTH_MUTATE): the mutant under test lives
// in this process, never in the spawned children.
describe.skipIf(process.env.BOOTH_MUTATE === '1')('a real crash: SIGKILL, then a second process resumes', () => {
  // Every point where a 3-attempt run can die: inside each call, and right after each saved attempt.
  const stops = [
    { stop: 'call:0', killOn: 'calling 0', repeated: 0 },
    { stop: 'saved:0', killOn: 'saved 0', repeated: null },
    { stop: 'call:1', killOn: 'calling 1', repeated: 1 },
    { stop: 'saved:1', killOn: 'saved 1', repeated: null },
    { stop: 'call:2', killOn: 'calling 2', repeated: 2 },
  ];

  for (const { stop, killOn, repeated } of stops) {
    it(`killed at ${stop}: finished attempts run once, the result is that of an uninterrupted run`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'booth-crash-'));
      const log = join(dir, 'calls.log');
      const first = await runChild([join(dir, 'store'), log, stop], killOn);
      expect(first.signal).toBe('SIGKILL');
      const second = await runChild([join(dir, 'store'), log, 'none']);
      const json = second.stdout.split('\n').find((line) => line.startsWith('RESULT '))?.slice('RESULT '.length);
      expect(decided(JSON.parse(json ?? 'null'))).toEqual(decided(JSON.parse(JSON.stringify(await uninterrupted()))));

      const calls = readFileSync(log, 'utf8').trim().split('\n').map(Number);
      // Each attempt is called exactly once, except the one whose call was cut off mid-flight.
      expect(calls).toEqual([0, 1, 2].flatMap((attempt) => (attempt === repeated ? [attempt, attempt] : [attempt])));
      expect(existsSync(join(dir, 'store', 'crash-test.json'))).toBe(false);
    }, 30_000);
  }
});
