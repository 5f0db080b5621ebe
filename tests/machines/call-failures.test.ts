import { describe, expect, it } from 'vitest';
import { createActor, waitFor } from 'xstate';
import { checkpointMachine } from '../../machines/index.js';
import { acheck, check } from '../../src/index.js';
import { nextStep } from '../../src/visualize/explain.js';
import { decided, envelope } from '../fixtures/helpers.js';

/**
 * A failed call is its own verdict: `method: 'call_failure'` when no call of the run
 * returned, and a status no retry can fix (any 4xx but 408, 409 and 429) ends the run at
 * once instead of spending the attempts and call retries left.
 */

const withStatus = (status: number) => Object.assign(new Error(`the provider answered ${status}`), { status });

/** A model that fails with `status` on every call, and counts its calls. */
function failing(status: number) {
  const model = {
    calls: 0,
    sync: (): string => {
      model.calls += 1;
      throw withStatus(status);
    },
    async: async (): Promise<string> => model.sync(),
  };
  return model;
}

const spend = { maxRetries: 2, callRetries: { retries: 3, minDelayMs: 0, maxDelayMs: 0 } } as const;

describe('a call that no retry can fix', () => {
  for (const status of [400, 401, 403, 404, 422]) {
    it(`${status}: one call, UNCERTAIN, method call_failure, through check() and acheck() alike`, async () => {
      const sync = failing(status);
      const result = check(sync.sync, 'q', { maxRetries: spend.maxRetries });
      const async = failing(status);
      const asyncResult = await acheck(async.async, 'q', { maxRetries: spend.maxRetries });
      const retried = failing(status);
      await acheck(retried.async, 'q', spend);
      expect([sync.calls, async.calls, retried.calls]).toEqual([1, 1, 1]);
      expect(result.status).toBe('UNCERTAIN');
      expect(result.method).toBe('call_failure');
      expect(result.trace).toEqual([
        { state: 'calling', attempt: 0 },
        { state: 'uncertain', attempt: 0 },
      ]);
      expect(decided(asyncResult)).toEqual(decided(result));
    });
  }

  for (const status of [408, 409, 429, 500, 503]) {
    it(`${status} may pass: every call retry and every attempt is spent`, async () => {
      const model = failing(status);
      const result = await acheck(model.async, 'q', spend);
      expect(model.calls).toBe((spend.maxRetries + 1) * (spend.callRetries.retries + 1));
      expect(result.method).toBe('call_failure');
    });
  }

  it('an error without a status is retried: a refused connection may come back', () => {
    let calls = 0;
    const result = check(() => {
      calls += 1;
      throw new Error('ECONNREFUSED');
    }, 'q', { maxRetries: 1 });
    expect(calls).toBe(2);
    expect(result.method).toBe('call_failure');
  });

  it('with samples, one sample failing for good ends the attempt and the run; the samples not yet called are not called', async () => {
    let calls = 0;
    const model = async (_prompt: string, info: { sample?: number }) => {
      calls += 1;
      if (info.sample === 1) throw withStatus(401);
      return envelope('Paris', 0.9);
    };
    const result = await acheck(model, 'q', { samples: 4, sampleConcurrency: 1, maxRetries: 2 });
    expect(calls).toBe(2);
    expect(result.status).toBe('UNCERTAIN');
    expect(result.nAttempts).toBe(1);
    expect(result.trace.map((step) => step.state)).toEqual(['sampling', 'uncertain']);
    const samples = result.attempts[0]!.samples!;
    expect(samples.map((sample) => sample.callFailed)).toEqual([false, true, true, true]);
    expect(samples[1]!.error).toContain('the provider answered 401');
    expect(samples[2]!.error).toContain("not called: sample 2's call failed with a status no retry can fix");
    expect(samples[2]!.callTries).toEqual([]);
    expect(samples[1]!.callTries).toEqual([{ error: 'the provider answered 401', delayMs: null, permanent: true }]);
  });

  it('with samples in flight and no timeout, the failure aborts them, and each says it was abandoned, not uncalled', async () => {
    const aborted: number[] = [];
    const model = (_prompt: string, info: { sample?: number; signal?: AbortSignal }) =>
      new Promise<string>((_resolve, reject) => {
        if (info.sample === 2) return setTimeout(() => reject(withStatus(403)), 5);
        info.signal?.addEventListener('abort', () => {
          aborted.push(info.sample!);
          reject(info.signal!.reason);
        });
      });
    const result = await acheck(model, 'q', { samples: 3, maxRetries: 2 });
    expect(aborted.sort()).toEqual([0, 1]);
    const samples = result.attempts[0]!.samples!;
    expect(samples.map((sample) => sample.error)).toEqual([
      "abandoned during the call: sample 3's call failed with a status no retry can fix",
      "abandoned during the call: sample 3's call failed with a status no retry can fix",
      'the provider answered 403',
    ]);
    // Each abandoned sample's call counts, as a timed-out one does.
    expect(samples[0]!.callTries).toHaveLength(1);
  });

  it('a sample waiting to retry is abandoned "while waiting to retry"', async () => {
    const model = async (_prompt: string, info: { sample?: number; attempt: number }) => {
      if (info.sample === 0) throw new Error('ECONNRESET');
      await new Promise((resolve) => setTimeout(resolve, 5));
      throw withStatus(400);
    };
    const result = await acheck(model, 'q', { samples: 2, callRetries: { retries: 1, minDelayMs: 60_000 } });
    expect(result.attempts[0]!.samples![0]!.error).toBe("abandoned while waiting to retry: sample 2's call failed with a status no retry can fix");
  });

  it('one sample replying and another failing for good: method call_failure, and the page says why the run stopped', async () => {
    const model = async (_prompt: string, info: { sample?: number }) => {
      if (info.sample === 1) throw withStatus(404);
      return envelope('Paris', 0.2);
    };
    const result = await acheck(model, 'q', { samples: 2, sampleConcurrency: 1, maxRetries: 2 });
    expect(result.nAttempts).toBe(1);
    expect(result.callFailed).toBe(false);
    expect(result.method).toBe('call_failure');
    expect(nextStep(result, 0)).toBe('UNCERTAIN: a call failed with a status no retry can fix');
    // A run that spent its attempts says so, as before.
    const spent = check(() => envelope('Paris', 0.2), 'q', { maxRetries: 0 });
    expect(nextStep(spent, 0)).toBe('UNCERTAIN: no retries left');
  });

  it('in a workflow, the machine stops on the same guard', async () => {
    let calls = 0;
    const actor = createActor(checkpointMachine, {
      input: {
        prompt: 'q',
        maxRetries: 2,
        model: () => {
          calls += 1;
          throw withStatus(401);
        },
      },
    }).start();
    const done = await waitFor(actor, (snapshot) => snapshot.status === 'done');
    expect(calls).toBe(1);
    expect(done.output?.status).toBe('UNCERTAIN');
    expect(done.output?.attempts).toHaveLength(1);
  });
});

describe("method: 'call_failure'", () => {
  it('when every attempt failed to get a reply, timeouts and the deadline included', async () => {
    const never = () => new Promise<string>(() => {});
    const timedOut = await acheck(never, 'q', { timeoutMs: 5, maxRetries: 1 });
    expect(timedOut.method).toBe('call_failure');
    const late = await acheck(never, 'q', { deadlineMs: 5 });
    expect(late.method).toBe('call_failure');
  });

  it('not when one attempt got a reply, however bad: that is the reader at work', () => {
    let calls = 0;
    const result = check(() => {
      calls += 1;
      if (calls === 1) throw new Error('ECONNREFUSED');
      return 'not json';
    }, 'q', { maxRetries: 1 });
    expect(result.method).toBe('parse_failure');
  });
});
