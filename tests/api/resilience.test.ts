import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createActor } from 'xstate';
import { checkpointMachine } from '../../machines/checkpoint/machine.js';
import { acheck, check, type CheckOptions, memoryStore } from '../../src/index.js';
import { backoffDelay, LONGEST_WAIT_MS } from '../../src/decide/call-retries.js';
import { envelope } from '../fixtures/helpers.js';

/** A call that never answers on its own, and records the signal it was given. */
function hanging() {
  const signals: AbortSignal[] = [];
  let release: (text: string) => void = () => {};
  const call = (_prompt: string, info: { signal?: AbortSignal }) => {
    if (info.signal) signals.push(info.signal);
    return new Promise<string>((resolve) => (release = resolve));
  };
  return { call, signals, release: (text: string) => release(text) };
}

const httpError = (status: number, message: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(message), { status, ...extra });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('timeoutMs', () => {
  it('a call that takes longer is a failed attempt, its signal aborts, and the run goes on', async () => {
    const slow = hanging();
    let calls = 0;
    const pending = acheck(
      (prompt, info) => (calls++ === 0 ? slow.call(prompt, info) : envelope('Paris', 0.9)),
      'q',
      { timeoutMs: 1_000 },
    );
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    const result = await pending;
    expect(result.status).toBe('REPAIRED');
    expect(result.attempts[0]).toMatchObject({ callFailed: true, error: 'the model call timed out after 1000 ms', rawText: 'TimeoutError: the model call timed out after 1000 ms' });
    expect(slow.signals[0]?.aborted).toBe(true);
    expect(result.prompts[1]?.kind).toBe('repeat');
  });

  it('the late reply, if it comes, is ignored', async () => {
    const slow = hanging();
    const pending = acheck(slow.call, 'q', { timeoutMs: 500, maxRetries: 0 });
    await vi.advanceTimersByTimeAsync(500);
    slow.release(envelope('too late', 0.99));
    const result = await pending;
    expect(result.status).toBe('UNCERTAIN');
    expect(result.attempts).toHaveLength(1);
    expect(result.answer).toBeNull();
  });

  it('a call that answers in time is not affected', async () => {
    const pending = acheck(async () => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      return envelope('Paris', 0.9);
    }, 'q', { timeoutMs: 500 });
    await vi.advanceTimersByTimeAsync(400);
    expect((await pending).status).toBe('VERIFIED');
  });

  it('a call that answers in time cancels its timeout, so the timer cannot cut the next call short', async () => {
    // Two 300 ms calls under a 500 ms timeout: a timer left over from the first would fire 200 ms into the second.
    const pending = acheck(async (_prompt, { attempt }) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return envelope('Paris', attempt === 0 ? 0.3 : 0.9);
    }, 'q', { timeoutMs: 500 });
    await vi.advanceTimersByTimeAsync(600);
    const result = await pending;
    expect(result.status).toBe('REPAIRED');
    expect(result.attempts.map((attempt) => attempt.callFailed)).toEqual([false, false]);
  });
});

describe('timers', () => {
  it('a finished run leaves no timer behind, so the process can exit', async () => {
    const pending = acheck(async () => envelope('Paris', 0.9), 'q', { timeoutMs: 60_000, deadlineMs: 600_000 });
    expect((await pending).status).toBe('VERIFIED');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a run without timers schedules none', () => {
    check(() => envelope('Paris', 0.2), 'q', { maxRetries: 3 });
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('deadlineMs', () => {
  it('a reply judged at the very millisecond of the deadline starts no new attempt', () => {
    const actor = createActor(checkpointMachine, { input: { prompt: 'q', effects: 'events', deadlineMs: 2_000, maxRetries: 5 } }).start();
    // The clock reaches the deadline; its timer has not run yet when the reply is judged.
    vi.setSystemTime(Date.now() + 2_000);
    actor.send({ type: 'model.replied', reply: envelope('Paris', 0.2) });
    expect(actor.getSnapshot().output?.status).toBe('UNCERTAIN');
    actor.stop();
  });

  it('when it passes during a call, no new attempt starts and the result is UNCERTAIN', async () => {
    const slow = hanging();
    const callFn = vi.fn(slow.call);
    const pending = acheck(callFn, 'q', { deadlineMs: 2_000, maxRetries: 5 });
    await vi.advanceTimersByTimeAsync(2_000);
    const result = await pending;
    expect(result.status).toBe('UNCERTAIN');
    expect(callFn).toHaveBeenCalledTimes(1);
    expect(result.attempts[0]?.error).toBe('the deadline of 2000 ms passed during the call');
    expect(result.trace.map((s) => s.state)).toEqual(['calling', 'uncertain']);
  });

  it('keeps the attempts so far', async () => {
    let calls = 0;
    const pending = acheck(
      async () => {
        calls += 1;
        await new Promise((resolve) => setTimeout(resolve, 700));
        return envelope(`guess ${calls}`, 0.2);
      },
      'q',
      { deadlineMs: 2_000, maxRetries: 9 },
    );
    await vi.advanceTimersByTimeAsync(2_000);
    const result = await pending;
    expect(result.status).toBe('UNCERTAIN');
    expect(result.attempts.map((a) => a.answer)).toEqual(['guess 1', 'guess 2', null]);
    expect(result.answer).toBe('guess 2');
  });

  it('a reply after the deadline starts no reconsideration', async () => {
    vi.setSystemTime(0);
    const pending = acheck(
      async () => {
        vi.setSystemTime(Date.now() + 5_000); // the call took longer than the whole budget, timers aside
        return envelope('Paris', 0.1);
      },
      'q',
      { deadlineMs: 1_000, maxRetries: 3 },
    );
    const result = await pending;
    expect(result.status).toBe('UNCERTAIN');
    expect(result.nAttempts).toBe(1);
  });
});

describe('callRetries', () => {
  it('retries failed calls with jittered exponential backoff, recording every try', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const errors = [httpError(503, 'unavailable'), httpError(500, 'oops')];
    const callFn = vi.fn(async () => {
      const error = errors.shift();
      if (error) throw error;
      return envelope('Paris', 0.9);
    });
    const pending = acheck(callFn, 'q', { callRetries: { retries: 3, minDelayMs: 100, factor: 2 } });
    await vi.advanceTimersByTimeAsync(149);
    expect(callFn).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1); // 100 · 2⁰ · 1.5
    expect(callFn).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(300); // 100 · 2¹ · 1.5
    const result = await pending;
    expect(result.status).toBe('VERIFIED');
    expect(result.nAttempts).toBe(1);
    expect(result.attempts[0]?.callTries).toEqual([
      { error: 'unavailable', delayMs: 150 },
      { error: 'oops', delayMs: 300 },
      { error: null, delayMs: null },
    ]);
    expect(result.trace.map((s) => s.state).slice(0, 5)).toEqual(['calling', 'backingOff', 'calling', 'backingOff', 'calling']);
  });

  it('a retryAfterMs longer than a timer can wait is cut to the longest wait, never fired at once', () => {
    expect(backoffDelay({ retries: 1 }, 1, 1e12, 0)).toBe(LONGEST_WAIT_MS);
    expect(backoffDelay({ retries: 1 }, 1, LONGEST_WAIT_MS - 1, 0)).toBe(LONGEST_WAIT_MS - 1);
  });

  it('caps the wait at maxDelayMs but honours a longer retryAfterMs', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.99);
    const errors = [httpError(503, 'busy'), httpError(429, 'slow down', { retryAfterMs: 5_000 })];
    const pending = acheck(
      async () => {
        const error = errors.shift();
        if (error) throw error;
        return envelope('Paris', 0.9);
      },
      'q',
      { callRetries: { retries: 2, minDelayMs: 1_000, maxDelayMs: 1_200 } },
    );
    await vi.advanceTimersByTimeAsync(10_000);
    const result = await pending;
    expect(result.attempts[0]?.callTries.map((t) => t.delayMs)).toEqual([1_200, 5_000, null]);
  });

  it('does not retry a client error, and falls back to reconsideration when tries run out', async () => {
    const bad = vi.fn(async () => {
      throw httpError(400, 'bad request');
    });
    const first = acheck(bad, 'q', { callRetries: { retries: 3 }, maxRetries: 0 });
    await vi.advanceTimersByTimeAsync(0);
    expect((await first).attempts[0]?.callTries).toEqual([{ error: 'bad request', delayMs: null, permanent: true }]);
    expect(bad).toHaveBeenCalledTimes(1);

    const down = vi.fn(async () => {
      throw httpError(503, 'down');
    });
    const second = acheck(down, 'q', { callRetries: { retries: 1, minDelayMs: 10 }, maxRetries: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    const result = await second;
    expect(down).toHaveBeenCalledTimes(4); // 2 tries for each of 2 attempts
    expect(result.attempts.map((a) => a.callTries.length)).toEqual([2, 2]);
    expect(result.status).toBe('UNCERTAIN');
  });

  it('an abort stops the backoff wait at once', async () => {
    const controller = new AbortController();
    const callFn = vi.fn(async () => {
      throw httpError(503, 'down');
    });
    const pending = acheck(callFn, 'q', { signal: controller.signal, callRetries: { retries: 5, minDelayMs: 60_000 } });
    await vi.advanceTimersByTimeAsync(10);
    controller.abort(new Error('user left'));
    await expect(pending).rejects.toThrow('user left');
    await vi.advanceTimersByTimeAsync(600_000);
    expect(callFn).toHaveBeenCalledTimes(1);
  });

  it('the deadline cuts a backoff short', async () => {
    const pending = acheck(
      async () => {
        throw httpError(503, 'down');
      },
      'q',
      { deadlineMs: 1_000, callRetries: { retries: 5, minDelayMs: 10_000 } },
    );
    await vi.advanceTimersByTimeAsync(1_000);
    const result = await pending;
    expect(result.status).toBe('UNCERTAIN');
    expect(result.attempts[0]?.error).toBe('the deadline of 1000 ms passed while waiting to retry');
  });
});

describe('acheck-only options', () => {
  it('check() rejects them with a TypeError that points to acheck()', () => {
    for (const option of ['timeoutMs', 'deadlineMs', 'callRetries', 'checkpoint', 'key', 'signal']) {
      expect(() => check(() => envelope('a', 0.9), 'q', { [option]: 1 } as CheckOptions)).toThrow(/acheck\(\)/);
    }
  });

  it('bad values are typed errors naming the option', async () => {
    await expect(acheck(() => '', 'q', { timeoutMs: 0 })).rejects.toThrow(RangeError);
    await expect(acheck(() => '', 'q', { deadlineMs: '5s' as unknown as number })).rejects.toThrow(/`deadlineMs`/);
    await expect(acheck(() => '', 'q', { callRetries: { retries: 1.5 } })).rejects.toThrow(/`callRetries.retries`/);
    await expect(acheck(() => '', 'q', { callRetries: { retries: 1, factor: 0.5 } })).rejects.toThrow(/`callRetries.factor`/);
    await expect(acheck(() => '', 'q', { callRetries: { retries: 1, jitter: true } as never })).rejects.toThrow(/`jitter`/);
    await expect(acheck(() => '', 'q', { key: 'run-1' })).rejects.toThrow(/`checkpoint`/);
  });

  const answer = () => envelope('a', 0.9);
  const rejection = (options: Record<string, unknown>) =>
    acheck(answer, 'q', options as never).then(
      () => undefined,
      (error: Error) => error,
    );

  it('a timer may be up to 2 ** 31 - 2 ms, the longest Node can wait; null means none', async () => {
    for (const name of ['timeoutMs', 'deadlineMs']) {
      await expect(acheck(answer, 'q', { [name]: 2 ** 31 - 2 })).resolves.toHaveProperty('status', 'VERIFIED');
      await expect(acheck(answer, 'q', { [name]: null })).resolves.toHaveProperty('status', 'VERIFIED');
      const error = await rejection({ [name]: 2 ** 31 - 1 });
      expect(error).toBeInstanceOf(RangeError);
      expect(error?.message).toBe(`Expected \`${name}\` to be more than 0 and at most 2147483646 ms, got 2147483647.`);
      for (const text of ['5s', '5']) {
        const notANumber = await rejection({ [name]: text });
        expect(notANumber).toBeInstanceOf(TypeError);
        expect(notANumber?.message).toBe(`Expected \`${name}\` to be a number of milliseconds, got "${text}".`);
      }
    }
  });

  it('callRetries: retries 0 and delays of 0 and a factor of 1 are allowed', async () => {
    const callRetries = { retries: 0, minDelayMs: 0, maxDelayMs: 0, factor: 1 };
    await expect(acheck(answer, 'q', { callRetries })).resolves.toHaveProperty('status', 'VERIFIED');
  });

  it('callRetries: a bad value is a TypeError saying what each setting must be', async () => {
    expect((await rejection({ callRetries: { retries: -1 } }))?.message).toBe(
      'Expected `callRetries.retries` to be a whole number, 0 or more, got -1.',
    );
    expect((await rejection({ callRetries: { retries: '2' } }))?.message).toMatch(/`callRetries.retries` .*got "2"/);
    expect((await rejection({ callRetries: { retries: 1, minDelayMs: -1 } }))?.message).toBe(
      'Expected `callRetries.minDelayMs` to be a number of ms, 0 or more, got -1.',
    );
    expect((await rejection({ callRetries: { retries: 1, factor: 0.5 } }))?.message).toBe(
      'Expected `callRetries.factor` to be a number of at least 1, got 0.5.',
    );
    for (const maxDelayMs of ['5', Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(await rejection({ callRetries: { retries: 1, maxDelayMs } })).toBeInstanceOf(TypeError);
    }
  });

  it('callRetries: a minDelayMs above maxDelayMs is a RangeError naming both and the fix; equal is allowed', async () => {
    const error = await rejection({ callRetries: { retries: 1, minDelayMs: 5_000, maxDelayMs: 100 } });
    expect(error).toBeInstanceOf(RangeError);
    expect(error?.message).toBe(
      'Expected `callRetries.minDelayMs` (5000) to be at most `callRetries.maxDelayMs` (100): the first wait cannot be longer than the longest. Lower minDelayMs or raise maxDelayMs.',
    );
    await expect(acheck(answer, 'q', { callRetries: { retries: 1, minDelayMs: 100, maxDelayMs: 100 } })).resolves.toHaveProperty('status', 'VERIFIED');
    // Only the caller's own two values are compared: minDelayMs alone above the default cap (30 000) is capped, as before.
    await expect(acheck(answer, 'q', { callRetries: { retries: 1, minDelayMs: 60_000 } })).resolves.toHaveProperty('status', 'VERIFIED');
    await expect(acheck(answer, 'q', { callRetries: { retries: 1, maxDelayMs: 100 } })).resolves.toHaveProperty('status', 'VERIFIED');
  });

  it('callRetries: an unknown setting is named, with the nearest one suggested', async () => {
    expect((await rejection({ callRetries: { retries: 1, minDelay: 5 } }))?.message).toBe(
      'Unknown option `minDelay` for `callRetries`; did you mean `minDelayMs`?',
    );
    expect((await rejection({ callRetries: { retries: 1, delayMs: 5 } }))?.message).toMatch(
      /did you mean `minDelayMs`\?/,
    );
    expect((await rejection({ callRetries: 3 }))?.message).toBe('Expected `callRetries` to be a plain object, got 3.');
  });

  it('checkpoint and key: both null is no checkpoint; either without the other is a TypeError', async () => {
    await expect(acheck(answer, 'q', { checkpoint: null, key: null })).resolves.toHaveProperty('status', 'VERIFIED');
    const storeMessage = /^Expected `checkpoint` to be a store with load\(key\), save\(key, checkpoint\) and delete\(key\)/;
    expect((await rejection({ checkpoint: null, key: 'run-1' }))?.message).toMatch(storeMessage);
    expect((await rejection({ checkpoint: memoryStore() }))?.message).toBe(
      'Expected `key` to be a non-empty string naming the run in `checkpoint`, got undefined.',
    );
  });

  it('checkpoint: a store lacking any of load, save and delete is refused; key must be a non-empty string', async () => {
    const store = memoryStore();
    const storeMessage = /^Expected `checkpoint` to be a store/;
    expect((await rejection({ checkpoint: {}, key: 'k' }))?.message).toMatch(storeMessage);
    expect((await rejection({ checkpoint: { load: store.load, save: store.save }, key: 'k' }))?.message).toMatch(storeMessage);
    expect((await rejection({ checkpoint: 'store', key: 'k' }))?.message).toMatch(storeMessage);
    for (const key of ['', 7]) {
      const error = await rejection({ checkpoint: store, key });
      expect(error).toBeInstanceOf(TypeError);
      expect(error?.message).toMatch(/^Expected `key` to be a non-empty string/);
    }
  });
});
