import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { acheck, CheckpointError, memoryStore } from '../../src/index.js';
import { fileStore } from '../../src/stores/node.js';
import { decided } from '../fixtures/helpers.js';
import { interrupt, scriptedCall, storeContract, uninterrupted } from '../fixtures/store-contract.js';

storeContract('memoryStore', {
  make: () => {
    const store = memoryStore();
    return { store, count: () => store.size, location: () => null };
  },
});

const directory = () => mkdtempSync(join(tmpdir(), 'booth-store-'));

storeContract('fileStore', {
  make: () => {
    const dir = directory();
    const location = (key: string) => join(dir, `${encodeURIComponent(key)}.json`);
    return { store: fileStore(dir), count: () => readdirSync(dir).length, location };
  },
  writeRaw: ({ location }, key, text) => writeFileSync(location(key), text),
});

// Signed, a store keeps its contract: load gives back what was saved, without the signature.
storeContract('fileStore with a secret', {
  make: () => {
    const dir = directory();
    const location = (key: string) => join(dir, `${encodeURIComponent(key)}.json`);
    return { store: fileStore(dir, { secret: 'a secret of more than sixteen bytes' }), count: () => readdirSync(dir).length, location };
  },
  writeRaw: ({ location }, key, text) => writeFileSync(location(key), text),
});

describe('fileStore', () => {
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
});

describe('fileStore: keys of any length and any string', () => {
  const QUESTION = 'Which city is the capital of France?';

  /** Saves the run under `key` after attempt 0, stops it in attempt 1, then resumes it; the attempts called, in order. */
  async function interruptAndResume(store: ReturnType<typeof fileStore>, key: string): Promise<number[]> {
    const calls: number[] = [];
    await interrupt(store, key, calls);
    const resumed = await acheck(
      async (prompt, info) => {
        calls.push(info.attempt);
        return scriptedCall(prompt, info);
      },
      QUESTION,
      { maxRetries: 2, checkpoint: store, key },
    );
    expect(decided(resumed)).toEqual(decided(await uninterrupted()));
    return calls;
  }

  it('a key too long for a file name (204 to 250 encoded characters failed the save; more failed the load) is saved under its hash and resumed', async () => {
    const keys = ['k'.repeat(204), 'k'.repeat(230), 'k'.repeat(250), 'k'.repeat(251), '/'.repeat(100), 'é'.repeat(5_000), 'k'.repeat(100_000)];
    for (const key of keys) {
      const dir = directory();
      const store = fileStore(dir);
      expect(await interruptAndResume(store, key), `key of ${key.length}`).toEqual([0, 1, 1, 2]);
      expect(readdirSync(dir), `key of ${key.length}`).toEqual([]); // deleted once done, no temporary file left
    }
  });

  it('names up to 250 encoded characters stay what they were, so stored runs still resume; longer ones are a SHA-256 no key can encode to', async () => {
    const dir = directory();
    const store = fileStore(dir);
    const checkpoint = (key: string) => ({ format: 'booth.checkpoint', version: 1, key, snapshot: { n: 1 } }) as const;
    for (const key of ['k'.repeat(250), 'a/b c', '%sha256-x', 'k'.repeat(251), '/'.repeat(84)]) await store.save(key, checkpoint(key));
    const hash = (text: string) => createHash('sha256').update(text).digest('hex');
    expect(readdirSync(dir).sort()).toEqual(
      [`${'k'.repeat(250)}.json`, 'a%2Fb%20c.json', '%25sha256-x.json', `%sha256-${hash('k'.repeat(251))}.json`, `%sha256-${hash('%2F'.repeat(84))}.json`].sort(),
    );
    expect(store.locate?.('k'.repeat(251))).toBe(join(dir, `%sha256-${hash('k'.repeat(251))}.json`));
    for (const key of ['k'.repeat(250), 'k'.repeat(251), '/'.repeat(84)]) expect(await store.load(key)).toEqual(checkpoint(key));
  });

  it('a hashed file holding another key (a planted file, or a hash collision) is a CheckpointError, and no call is made', async () => {
    const dir = directory();
    const store = fileStore(dir);
    const key = 'k'.repeat(300);
    await store.save(key, { format: 'booth.checkpoint', version: 1, key: 'someone else', snapshot: { n: 1 } });
    expect(() => store.load(key)).toThrow(CheckpointError);
    expect(() => store.load(key)).toThrow(`holds the checkpoint of another key ("someone else"), which shares its file name. Delete or move the file to start the run afresh.`);
    const callFn = vi.fn(scriptedCall);
    await expect(acheck(callFn, QUESTION, { checkpoint: store, key })).rejects.toBeInstanceOf(CheckpointError);
    expect(callFn).not.toHaveBeenCalled();
  });

  it('a key with a lone surrogate (a URIError before) is saved and resumed, apart from the same key with another surrogate', async () => {
    const dir = directory();
    const store = fileStore(dir);
    for (const key of ['\ud800', 'a\udc00b', '\udc00\ud800', `${'k'.repeat(300)}\ud800`, `${'k'.repeat(300)}\ud801`]) {
      expect(await interruptAndResume(store, key), JSON.stringify(key)).toEqual([0, 1, 1, 2]);
    }
    const checkpoint = (key: string) => ({ format: 'booth.checkpoint', version: 1, key, snapshot: { key } }) as const;
    const [high, other] = [`${'k'.repeat(300)}\ud800`, `${'k'.repeat(300)}\ud801`];
    await store.save(high, checkpoint(high));
    await store.save(other, checkpoint(other));
    await store.save('\ud800', checkpoint('\ud800'));
    expect(readdirSync(dir)).toHaveLength(3);
    expect(readdirSync(dir)).toContain('%ud800.json');
    expect(await store.load(high)).toEqual(checkpoint(high));
    expect(await store.load(other)).toEqual(checkpoint(other));
  });

  it('a key no run can be named by (not a string, or empty) is a TypeError naming it, before any file or call', async () => {
    const dir = directory();
    const store = fileStore(dir);
    for (const key of ['', 42, null, undefined, { id: 1 }]) {
      const message = /Expected the checkpoint `key` to be a non-empty string naming the run, got/;
      expect(() => store.load(key as string), String(key)).toThrow(TypeError);
      expect(() => store.load(key as string), String(key)).toThrow(message);
      expect(() => store.save(key as string, { format: 'booth.checkpoint', version: 1, key: 'x', snapshot: {} }), String(key)).toThrow(message);
      expect(() => store.delete(key as string), String(key)).toThrow(message);
    }
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  });
});

const CHILD = fileURLToPath(new URL('../fixtures/durable-child.ts', import.meta.url));

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

// Left out of `npm run mutate` (tests/config/vitest.mutate.config.ts sets BOOTH_MUTATE): the mutant under test lives
// in this process, never in the spawned children.
describe.skipIf(process.env.BOOTH_MUTATE === '1')('a real crash: SIGKILL, then a second process resumes', () => {
  // Every point where a 3-attempt run can die: inside each call, and right after each saved attempt.
  const stops = [
    { stop: 'call:0', killOn: 'calling 0', repeated: 0 },
    { stop: 'saved:0', killOn: 'saved 0', repeated: null },
    { stop: 'call:1', killOn: 'calling 1', repeated: 1 },
    { stop: 'saved:1', killOn: 'saved 1', repeated: null },
    { stop: 'call:2', killOn: 'calling 2', repeated: 2 },
    // The last attempt is saved before the checkpoint is deleted: a run that died between the two resumes ended.
    { stop: 'saved:2', killOn: 'saved 2', repeated: null },
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
