// A core test for every runtime: vitest and the built package only (see tests/portable/README.md).
import { describe, expect, it } from 'vitest';
import { acheck, type CallInfo, type Checkpoint, CheckpointError, type CheckpointStore, memoryStore } from 'boothjs';
import { envelope } from 'boothjs/testing';

const QUESTION = 'Which city is the capital of France?';
const REPLIES = [envelope('Lyon', 0.1), envelope('Marseille', 0.3), envelope('Paris', 0.9)];
const reply = (info: CallInfo) => REPLIES[info.attempt] ?? '';

/** A run that dies while attempt 1 is called (the process going down), leaving attempt 0 saved in `store`. */
async function interrupt(store: CheckpointStore, key: string, calls: number[], reported: number[]) {
  const controller = new AbortController();
  const run = acheck(
    async (_prompt, info) => {
      calls.push(info.attempt);
      if (info.attempt === 1) controller.abort(new Error('process going down'));
      return reply(info);
    },
    QUESTION,
    { maxRetries: 2, checkpoint: store, key, signal: controller.signal, onAttempt: (index) => void reported.push(index) },
  );
  await expect(run).rejects.toThrow('process going down');
}

/** The decision of a run, without its timings, which differ from run to run. */
const decision = (result: Awaited<ReturnType<typeof acheck>>) => ({
  status: result.status,
  answer: result.answer,
  trace: result.trace,
  prompts: result.prompts,
  attempts: result.attempts.map(({ durationMs: _, ...attempt }) => attempt),
});

describe('durable checks with memoryStore', () => {
  it('keeps a checkpoint per key until it is overwritten or deleted', async () => {
    const store = memoryStore();
    const checkpoint: Checkpoint = { format: 'booth.checkpoint', version: 1, key: 'a/b c:d é', snapshot: { n: 1, text: 'quote " and \\ and ✓' } };
    expect(await store.load('a/b c:d é')).toBeUndefined();
    await store.save('a/b c:d é', checkpoint);
    await store.save('other', { ...checkpoint, key: 'other' });
    expect(store.size).toBe(2);
    expect(await store.load('a/b c:d é')).toEqual(checkpoint);
    await store.save('a/b c:d é', { ...checkpoint, snapshot: { n: 2 } });
    expect(await store.load('a/b c:d é')).toEqual({ ...checkpoint, snapshot: { n: 2 } });
    await store.delete('a/b c:d é');
    await store.delete('a/b c:d é');
    expect(await store.load('a/b c:d é')).toBeUndefined();
    expect(store.size).toBe(1);
  });

  it('a run interrupted after an attempt resumes without repeating the finished call', async () => {
    const store = memoryStore();
    const calls: number[] = [];
    const reported: number[] = [];
    await interrupt(store, 'run-1', calls, reported);
    expect(calls).toEqual([0, 1]);
    expect(reported).toEqual([0]);
    expect(store.size).toBe(1);

    const resumed = await acheck(
      async (_prompt, info) => {
        calls.push(info.attempt);
        return reply(info);
      },
      QUESTION,
      { maxRetries: 2, checkpoint: store, key: 'run-1', onAttempt: (index) => void reported.push(index) },
    );
    // Only the call in flight when the run stopped is made again; finished attempts are not reported again.
    expect(calls).toEqual([0, 1, 1, 2]);
    expect(reported).toEqual([0, 1, 2]);
    expect(resumed.status).toBe('REPAIRED');
    expect(resumed.answer).toBe('Paris');
    expect(store.size).toBe(0);
  });

  it('the resumed result is the one an uninterrupted run gives', async () => {
    const store = memoryStore();
    await interrupt(store, 'run-2', [], []);
    const resumed = await acheck(async (_prompt, info) => reply(info), QUESTION, { maxRetries: 2, checkpoint: store, key: 'run-2' });
    const uninterrupted = await acheck(async (_prompt, info) => reply(info), QUESTION, { maxRetries: 2 });
    expect(decision(resumed)).toEqual(decision(uninterrupted));
  });

  it('the saved checkpoint is plain JSON', async () => {
    const store = memoryStore();
    await interrupt(store, 'run-3', [], []);
    const saved = (await store.load('run-3'))!;
    expect(saved).toMatchObject({ format: 'booth.checkpoint', key: 'run-3' });
    expect(JSON.parse(JSON.stringify(saved))).toEqual(saved);
  });

  it('a checkpoint of another run is a CheckpointError naming the key, never a silent restart', async () => {
    const store = memoryStore();
    await interrupt(store, 'k', [], []);
    let calls = 0;
    const model = async () => {
      calls += 1;
      return envelope('Paris', 0.9);
    };
    // Each prompt is named by the first 8 hex digits of its SHA-256 (Web Crypto here), never quoted.
    await expect(acheck(model, 'another question', { checkpoint: store, key: 'k', maxRetries: 2 })).rejects.toThrow(
      'Booth checkpoint for key "k" belongs to a different run: its prompt (sha-256 11b93293…) is not this call\'s (sha-256 a7048e6f…).',
    );
    await expect(acheck(model, QUESTION, { checkpoint: store, key: 'k', maxRetries: 5 })).rejects.toThrow(CheckpointError);
    expect(calls).toBe(0);
    expect(store.size).toBe(1);
  });

  it('a checkpoint that is not Booth\'s is a CheckpointError before any call', async () => {
    const store = memoryStore();
    await store.save('k', { format: 'something else' } as unknown as Checkpoint);
    let calls = 0;
    const run = acheck(
      async () => {
        calls += 1;
        return envelope('Paris', 0.9);
      },
      QUESTION,
      { checkpoint: store, key: 'k' },
    );
    await expect(run).rejects.toThrow(CheckpointError);
    await expect(run).rejects.toThrow('Booth checkpoint for key "k"');
    expect(calls).toBe(0);
  });
});
