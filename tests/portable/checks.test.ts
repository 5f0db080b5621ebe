// A core test for every runtime: vitest and the built package only (see tests/portable/README.md).
import { describe, expect, it } from 'vitest';
import {
  acheck,
  type Attempt,
  BLOCKED,
  type CallInfo,
  check,
  checkWithEvidence,
  COMPARE_FAILED,
  EMPTY_ANSWER,
  EVIDENCE_DISAGREES,
  INVALID_SCORE,
  NO_EVIDENCE,
  REPAIRED,
  UNCERTAIN,
  VERIFIED,
} from 'boothjs';
import { envelope, scriptedModel } from 'boothjs/testing';

describe('check()', () => {
  it('returns the result itself, never a Promise', () => {
    const result = check(() => envelope('Paris', 0.9), 'Capital of France?');
    expect(result).not.toBeInstanceOf(Promise);
    expect(result.status).toBe(VERIFIED);
  });

  it('refuses an async model up front, and a model that returns a Promise, pointing to acheck()', () => {
    // The types refuse them too; these are the calls of a JavaScript caller.
    const asyncModel = (async () => envelope('Paris', 0.9)) as never;
    expect(() => check(asyncModel, 'q')).toThrow(TypeError);
    expect(() => check(asyncModel, 'q')).toThrow('acheck');
    expect(() => check((() => Promise.resolve(envelope('Paris', 0.9))) as never, 'q')).toThrow('acheck');
  });

  it('reports bad arguments before any call, naming the argument', () => {
    let calls = 0;
    const model = () => {
      calls += 1;
      return envelope('Paris', 0.9);
    };
    expect(() => check(model, 42 as never)).toThrow(TypeError);
    expect(() => check('model' as never, 'q')).toThrow(TypeError);
    expect(() => check(model, 'q', { threshold: 5 })).toThrow(RangeError);
    expect(() => check(model, 'q', { maxRetries: 1.5 })).toThrow('maxRetries');
    expect(() => check(model, 'q', { treshold: 0.5 } as never)).toThrow('threshold');
    expect(() => check(model, 'q', { timeoutMs: 1000 } as never)).toThrow('acheck');
    expect(calls).toBe(0);
  });

  it('gives the model the attempt, the question and the chat messages', () => {
    const seen: CallInfo[] = [];
    check(
      (_prompt, info) => {
        seen.push(info);
        return info.attempt === 0 ? 'junk' : envelope('Paris', 0.9);
      },
      'Capital of France?',
      { system: 'Answer tersely.', messages: [{ role: 'user', content: 'I am in Europe.' }, { role: 'assistant', content: 'Noted.' }] },
    );
    expect(seen.map((info) => info.attempt)).toEqual([0, 1]);
    expect(seen[0]?.question).toBe('Capital of France?');
    const messages = seen[0]?.messages ?? [];
    const retried = seen[1]?.messages ?? [];
    expect(messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(messages[0]?.content).toContain('Answer tersely.');
    expect(messages[3]?.content).toContain('Capital of France?');
    // The system message is the same on a retry, so a provider's prompt cache applies.
    expect(retried[0]).toEqual(messages[0]);
    expect(typeof seen[0]?.replySchema).toBe('object');
  });

  it('calls onAttempt once per attempt, in order, with the very attempts of the result', () => {
    const seen: Array<[number, Attempt]> = [];
    const result = check(scriptedModel(['x', envelope('a', 0.2), envelope('a', 0.9)]).sync, 'q', {
      maxRetries: 2,
      onAttempt: (index, attempt) => void seen.push([index, attempt]),
    });
    expect(seen.map(([index]) => index)).toEqual([0, 1, 2]);
    for (const [index, attempt] of seen) expect(attempt).toBe(result.attempts[index]);
  });

  it('with samples, the replies vote and the confidence comes from the vote', () => {
    const model = scriptedModel([envelope('Paris', 0.9), envelope('Paris', 0.8), envelope('Lyon', 0.9)]);
    const result = check(model.sync, 'q', { samples: 3, maxRetries: 0 });
    expect(model.prompts).toHaveLength(3);
    expect(result.answer).toBe('Paris');
    expect(result.agreement).toBeGreaterThan(0.6);
    expect(result.agreement).toBeLessThan(0.7);
    expect(result.attempts[0]?.clusters?.map((cluster) => [cluster.answer, cluster.count])).toEqual([
      ['Paris', 2],
      ['Lyon', 1],
    ]);
  });
});

describe('acheck()', () => {
  it('returns a Promise of the same decision check() makes', async () => {
    const pending = acheck(scriptedModel([envelope('Lyon', 0.3), envelope('Paris', 0.9)]).async, 'q');
    expect(pending).toBeInstanceOf(Promise);
    const result = await pending;
    expect(result.status).toBe(REPAIRED);
    expect(result.answer).toBe('Paris');
  });

  it('rejects bad arguments instead of throwing them', async () => {
    const pending = acheck(() => envelope('Paris', 0.9), 'q', { threshold: -1 });
    expect(pending).toBeInstanceOf(Promise);
    await expect(pending).rejects.toThrow(RangeError);
  });

  it('a call slower than timeoutMs fails its attempt and the next one is made', async () => {
    // Short enough that no runtime's harness finds the late reply's timer still pending.
    const model = scriptedModel([{ delayMs: 1_000, then: envelope('late', 0.9) }, envelope('Paris', 0.9)]);
    const started = Date.now();
    const result = await acheck(model.async, 'q', { timeoutMs: 30 });
    expect(Date.now() - started).toBeLessThan(800);
    expect(result.status).toBe(REPAIRED);
    expect(result.attempts[0]?.callFailed).toBe(true);
    expect(result.attempts[0]?.error).toContain('30');
    expect(result.answer).toBe('Paris');
  });

  it('the call gets an AbortSignal that aborts when Booth stops waiting for it', async () => {
    const signals: AbortSignal[] = [];
    const result = await acheck(
      (_prompt, info) =>
        new Promise<string>((resolve) => {
          if (info.signal) signals.push(info.signal);
          if (info.attempt === 1) resolve(envelope('Paris', 0.9));
        }),
      'q',
      { timeoutMs: 20 },
    );
    expect(result.status).toBe(REPAIRED);
    expect(signals).toHaveLength(2);
    expect(signals[0]?.aborted).toBe(true);
  });

  it('an abort rejects with its reason at once, and no further call is made', async () => {
    const controller = new AbortController();
    let calls = 0;
    const pending = acheck(
      () => {
        calls += 1;
        controller.abort(new Error('user went away'));
        return new Promise<string>(() => {});
      },
      'q',
      { signal: controller.signal, maxRetries: 3 },
    );
    await expect(pending).rejects.toThrow('user went away');
    expect(calls).toBe(1);
  });

  it('callRetries retries a failed call within the attempt, recording each try', async () => {
    const model = scriptedModel([{ throws: Object.assign(new Error('overloaded'), { status: 503 }) }, envelope('Paris', 0.9)]);
    const result = await acheck(model.async, 'q', { callRetries: { retries: 2, minDelayMs: 1, maxDelayMs: 5 } });
    expect(result.status).toBe(VERIFIED);
    expect(result.nAttempts).toBe(1);
    const tries = result.attempts[0]?.callTries ?? [];
    expect(tries).toHaveLength(2);
    expect(tries[0]?.error).toContain('overloaded');
    expect(tries[0]?.delayMs).toBeGreaterThanOrEqual(0);
    expect(tries[1]?.error).toBeNull();
  });

  it('a 4xx that no retry can fix ends the run at once, UNCERTAIN by call_failure', async () => {
    const model = scriptedModel([{ throws: Object.assign(new Error('bad key'), { status: 401 }) }]);
    const result = await acheck(model.async, 'q', { maxRetries: 3, callRetries: { retries: 3, minDelayMs: 1 } });
    expect(result.status).toBe(UNCERTAIN);
    expect(result.method).toBe('call_failure');
    expect(model.prompts).toHaveLength(1);
    expect(result.attempts[0]?.callTries[0]?.permanent).toBe(true);
  });
});

describe('checkWithEvidence()', () => {
  const same = (answer: string, evidence: readonly string[]) => evidence.includes(answer);

  it('VERIFIED when the comparator agrees, its score the confidence', () => {
    const result = checkWithEvidence('Paris', ['Paris'], same);
    expect(result.status).toBe(VERIFIED);
    expect(result.confidence).toBe(1);
    expect(result.evidenceAgreement).toBe(1);
    expect(result.method).toBe('evidence');
    expect(result.attempts).toEqual([]);
    expect(checkWithEvidence('Paris', ['Paris'], () => 0.8).confidence).toBe(0.8);
  });

  it('BLOCKED when the evidence disagrees, by false or by a score under the threshold', () => {
    const disagrees = checkWithEvidence('Lyon', ['Paris'], same);
    expect(disagrees.status).toBe(BLOCKED);
    expect(disagrees.reason).toBe(EVIDENCE_DISAGREES);
    expect(disagrees.confidence).toBe(0);
    const low = checkWithEvidence('Lyon', ['Paris'], () => 0.5, { evidenceThreshold: 0.6 });
    expect(low.status).toBe(BLOCKED);
    expect(low.detail).toContain('0.5');
    expect(low.detail).toContain('0.6');
    expect(() => low.unwrap()).toThrow('BLOCKED');
  });

  it('UNCERTAIN, with its reason, when it cannot judge', () => {
    const cases: Array<[ReturnType<typeof checkWithEvidence>, string]> = [
      [checkWithEvidence('  ', ['Paris'], same), EMPTY_ANSWER],
      [checkWithEvidence('Paris', [], same), NO_EVIDENCE],
      [
        checkWithEvidence('Paris', ['Paris'], () => {
          throw new Error('index offline');
        }),
        COMPARE_FAILED,
      ],
      [checkWithEvidence('Paris', ['Paris'], () => 7), INVALID_SCORE],
    ];
    for (const [result, reason] of cases) {
      expect(result.status).toBe(UNCERTAIN);
      expect(result.reason).toBe(reason);
      expect(result.confidence).toBeNull();
    }
    expect(cases[2]?.[0].detail).toBe('Error: index offline');
    expect(cases[2]?.[0].checkerFailed).toBe(true);
  });
});
