import { describe, expect, it } from 'vitest';
import { createActor, waitFor } from 'xstate';
import { checkpointMachine } from '../../machines/index.js';
import { acheck, check } from '../../src/index.js';
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
