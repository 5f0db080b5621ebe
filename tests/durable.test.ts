import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fileStore, memoryStore } from '../src/index.js';
import { decided } from './helpers.js';
import { storeContract, uninterrupted } from './store-contract.js';

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
