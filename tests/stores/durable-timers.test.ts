import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { acheck, type CheckpointStore, memoryStore } from '../../src/index.js';
import { envelope } from '../fixtures/helpers.js';

const QUESTION = 'Which city is the capital of France?';
const REPLIES = [envelope('Lyon', 0.1), envelope('Marseille', 0.3), envelope('Paris', 0.9)];
const scriptedCall = async (_prompt: string, { attempt }: { attempt: number }) => REPLIES[attempt] ?? '';
const never = () => new Promise<string>(() => {});

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Runs until attempt 1 is being called, then aborts, leaving the run saved in `store` under "run". */
async function interrupt(store: CheckpointStore, options: { timeoutMs?: number; deadlineMs?: number }) {
  const controller = new AbortController();
  const run = acheck(
    async (prompt, info) => {
      if (info.attempt === 1) controller.abort(new Error('process going down'));
      return scriptedCall(prompt, info);
    },
    QUESTION,
    { maxRetries: 2, checkpoint: store, key: 'run', signal: controller.signal, ...options },
  );
  await expect(run).rejects.toThrow('process going down');
}

/** Runs the clock to 1 ms before `ms` with `pending` unsettled, then to `ms` with it settled; its result. */
async function settlingAt<T>(pending: Promise<T>, ms: number): Promise<T> {
  let settled = false;
  void pending.then(() => (settled = true));
  await vi.advanceTimersByTimeAsync(ms - 1);
  expect(settled).toBe(false);
  await vi.advanceTimersByTimeAsync(1);
  await vi.advanceTimersByTimeAsync(0);
  expect(settled).toBe(true);
  return pending;
}

describe('a resumed durable run re-arms the timers a snapshot does not keep', () => {
  it('the call timeout: a call that hangs after the resume still times out and the run goes on', async () => {
    const store = memoryStore();
    await interrupt(store, { timeoutMs: 1_000 });
    const resumed = acheck((prompt, info) => (info.attempt === 1 ? never() : scriptedCall(prompt, info)), QUESTION, {
      maxRetries: 2,
      checkpoint: store,
      key: 'run',
      timeoutMs: 1_000,
    });
    const result = await settlingAt(resumed, 1_000);
    expect(result.status).toBe('REPAIRED');
    expect(result.attempts[1]).toMatchObject({ callFailed: true, error: 'the model call timed out after 1000 ms' });
  });

  it('the deadline: it still ends the run at the time set when the run first began', async () => {
    const store = memoryStore();
    await interrupt(store, { deadlineMs: 10_000 });
    await vi.advanceTimersByTimeAsync(4_000);
    const resumed = acheck(never, QUESTION, { maxRetries: 2, checkpoint: store, key: 'run', deadlineMs: 10_000 });
    const result = await settlingAt(resumed, 6_000);
    expect(result.status).toBe('UNCERTAIN');
    expect(result.attempts.at(-1)).toMatchObject({ callFailed: true, error: 'the deadline of 10000 ms passed during the call' });
  });

  it('the backoff: a run saved while it waits to retry a call waits again, then calls', async () => {
    // An onAttempt slower than the call timeout lets the timeout fail the call after its reply,
    // and the run is saved while it backs off: an honest checkpoint resting in backingOff.
    const store = memoryStore();
    const controller = new AbortController();
    const options = { checkpoint: store, key: 'run', timeoutMs: 100, callRetries: { retries: 2, minDelayMs: 5_000, maxDelayMs: 5_000 } };
    const first = acheck(async () => envelope('Lyon', 0.1), QUESTION, {
      ...options,
      signal: controller.signal,
      onAttempt: () => new Promise((resolve) => setTimeout(resolve, 300)),
    });
    const stopped = expect(first).rejects.toThrow('process going down');
    setTimeout(() => controller.abort(new Error('process going down')), 500);
    await vi.advanceTimersByTimeAsync(500);
    await stopped;
    expect((store.load('run') as { snapshot: { value: unknown } }).snapshot.value).toBe('backingOff');
    const resumed = acheck(async () => envelope('Paris', 0.9), QUESTION, options);
    // The wait is not kept in the snapshot, as the call timeout is not: it starts over.
    const result = await settlingAt(resumed, 5_000);
    expect(result).toMatchObject({ ok: true, answer: 'Paris' });
  });
});
