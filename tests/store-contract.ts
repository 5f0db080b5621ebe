import { describe, expect, it, vi } from 'vitest';
import { acheck, type Checkpoint, CheckpointError, type CheckpointStore } from '../src/index.js';
import { decided, envelope } from './helpers.js';

const QUESTION = 'Which city is the capital of France?';
const REPLIES = [envelope('Lyon', 0.1), envelope('Marseille', 0.3), envelope('Paris', 0.9)];
export const scriptedCall = async (_prompt: string, { attempt }: { attempt: number }) => REPLIES[attempt] ?? '';

/** The same run, never interrupted and never saved. */
export const uninterrupted = () => acheck(scriptedCall, QUESTION, { maxRetries: 2 });

/** A store under test, and what the contract needs to look behind it. */
export interface StoreUnderTest<H extends StoreHandle> {
  /** A new, empty store that shares nothing with the ones made before it. */
  make(): Promise<H> | H;
  /** Puts raw text where `key`'s checkpoint would be; absent for a store that holds no text. */
  readonly writeRaw?: (handle: H, key: string, text: string) => Promise<unknown> | void;
}

export interface StoreHandle {
  readonly store: CheckpointStore;
  /** How many checkpoints the store holds, counted in its medium (the map, the directory, the server). */
  count(): Promise<number> | number;
  /** Where the store says `key` is kept in its error messages; null when it does not say. */
  readonly location: (key: string) => string | null;
}

/** Leaves the run saved under `key` after attempt 0, stopped while attempt 1 is called. */
export async function interrupt(store: CheckpointStore, key: string, calls: number[] = [], reported: number[] = []) {
  const controller = new AbortController();
  const interrupted = acheck(
    async (prompt, info) => {
      calls.push(info.attempt);
      if (info.attempt === 1) controller.abort(new Error('process going down'));
      return scriptedCall(prompt, info);
    },
    QUESTION,
    { maxRetries: 2, checkpoint: store, key, signal: controller.signal, onAttempt: (index) => void reported.push(index) },
  );
  await expect(interrupted).rejects.toThrow('process going down');
}

/** What every checkpoint store must do, run against `name`. */
export function storeContract<H extends StoreHandle>(name: string, subject: StoreUnderTest<H>): void {
  describe(`${name}: the store contract`, () => {
    it('keeps a checkpoint per key until it is overwritten or deleted', async () => {
      const { store, count } = await subject.make();
      const checkpoint: Checkpoint = { format: 'booth.checkpoint', version: 1, key: 'a/b c:d é', snapshot: { n: 1, text: 'quote " and \\ and ✓' } };
      expect(await store.load('a/b c:d é')).toBeUndefined();
      await store.save('a/b c:d é', checkpoint);
      await store.save('other', { ...checkpoint, key: 'other' });
      expect(await count()).toBe(2);
      expect(await store.load('a/b c:d é')).toEqual(checkpoint);
      await store.save('a/b c:d é', { ...checkpoint, snapshot: { n: 2 } });
      expect(await store.load('a/b c:d é')).toEqual({ ...checkpoint, snapshot: { n: 2 } });
      expect(await count()).toBe(2);
      await store.delete('a/b c:d é');
      expect(await store.load('a/b c:d é')).toBeUndefined();
      expect(await store.load('other')).toEqual({ ...checkpoint, key: 'other' });
      await store.delete('a/b c:d é'); // deleting what is not there is not an error
      expect(await count()).toBe(1);
    });

    it('resumes where a run stopped: finished attempts are neither repeated nor reported again', async () => {
      const { store, count } = await subject.make();
      const calls: number[] = [];
      const reported: number[] = [];
      await interrupt(store, 'run-1', calls, reported);
      expect(await count()).toBe(1);

      const resumed = await acheck(
        async (prompt, info) => {
          calls.push(info.attempt);
          return scriptedCall(prompt, info);
        },
        QUESTION,
        { maxRetries: 2, checkpoint: store, key: 'run-1', onAttempt: (index) => void reported.push(index) },
      );
      expect(calls).toEqual([0, 1, 1, 2]); // only the call in flight is made again
      expect(reported).toEqual([0, 1, 2]);
      expect(decided(resumed)).toEqual(decided(await uninterrupted()));
      expect(await count()).toBe(0); // deleted on completion
    });

    it('a checkpoint of another run is an error naming the key, never a silent restart', async () => {
      const { store, count, location } = await subject.make();
      await interrupt(store, 'k');
      const callFn = vi.fn(scriptedCall);
      const where = location('k');
      const named = where === null ? '' : ` in ${where}`;
      await expect(acheck(callFn, 'another question', { checkpoint: store, key: 'k', maxRetries: 2 })).rejects.toThrow(
        `Booth checkpoint for key "k"${named} belongs to a different run: its prompt`,
      );
      await expect(acheck(callFn, QUESTION, { checkpoint: store, key: 'k', maxRetries: 5 })).rejects.toBeInstanceOf(CheckpointError);
      await expect(acheck(callFn, QUESTION, { checkpoint: store, key: 'k', maxRetries: 2, timeoutMs: 5_000 })).rejects.toThrow(
        /its timeoutMs is null, this call's is 5000/,
      );
      expect(callFn).not.toHaveBeenCalled();
      expect(await count()).toBe(1); // kept for the run it belongs to
    });

    const { writeRaw } = subject;
    if (!writeRaw) return;

    it('a corrupt checkpoint is a CheckpointError naming the key and where it is kept', async () => {
      const handle = await subject.make();
      const { store, location } = handle;
      await writeRaw(handle, 'run-7', '{"format": "booth.checkpoint", "snap');
      const run = acheck(scriptedCall, QUESTION, { checkpoint: store, key: 'run-7' });
      await expect(run).rejects.toBeInstanceOf(CheckpointError);
      await expect(run).rejects.toThrow(`Booth checkpoint for key "run-7" in ${location('run-7')} is corrupt`);
      await expect(run).rejects.toHaveProperty('location', location('run-7'));
    });

    it('a value that is not a Booth checkpoint is an error naming the key and where it is kept', async () => {
      const handle = await subject.make();
      const { store, location } = handle;
      await writeRaw(handle, 'run-8', JSON.stringify({ hello: 'world' }));
      await expect(acheck(scriptedCall, QUESTION, { checkpoint: store, key: 'run-8' })).rejects.toThrow(
        `Booth checkpoint for key "run-8" in ${location('run-8')} is not a Booth checkpoint`,
      );
    });
  });
}
