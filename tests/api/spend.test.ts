import { describe, expect, it, vi } from 'vitest';
import { acheck, check, clarify, memoryStore } from '../../src/index.js';
import type { CallInfo } from '../../src/decide/model-call.js';
import { forceEngine } from '../../src/engine/engines.js';
import { envelope } from '../fixtures/helpers.js';

/**
 * Spend only what the answer needs: a cascade asks the next model when one gives up, adaptive
 * samples stop calling once the vote is settled, and a budget stops the run before a call it
 * could not afford.
 */

const sure = (answer: string) => () => envelope(answer, 0.95);
const unsure = (answer: string) => () => envelope(answer, 0.3);
const outage = (status: number) => () => {
  throw Object.assign(new Error(`HTTP ${status}`), { status });
};

describe('a cascade (escalate)', () => {
  it('asks the next model from the first prompt when one ends UNCERTAIN; its first accepted attempt is VERIFIED', () => {
    const result = check(unsure('Lyon'), 'Capital of France?', { modelName: 'cheap', escalate: [{ call: sure('Paris'), name: 'strong' }] });
    expect(result.status).toBe('VERIFIED');
    expect(result.answer).toBe('Paris');
    expect(result.model).toBe('strong');
    expect(result.attempts.map((a) => a.model)).toEqual(['cheap', 'cheap', 'strong']);
    expect(result.escalations).toEqual([{ attempt: 2, model: 'strong' }]);
    expect(result.prompts.map((p) => p.kind)).toEqual(['first', 'confidence', 'escalation']);
    expect(result.prompts[2]!.text).toBe(result.prompts[0]!.text);
    expect(result.trace.map((s) => s.state)).toContain('escalating');
    expect(result.method).toBe('confidence');
  });

  it('never escalates an AMBIGUOUS question', () => {
    let asked = 0;
    const result = check(() => envelope('', 0.5, { ambiguous: true, interpretations: ['a', 'b'] }), 'q', {
      escalate: [
        () => {
          asked += 1;
          return envelope('x', 0.9);
        },
      ],
    });
    expect(result.status).toBe('AMBIGUOUS');
    expect(asked).toBe(0);
  });

  it('falls back to the next provider on an outage, without retrying a status no retry can fix', () => {
    const result = check(outage(401), 'q', { escalate: [sure('Paris')] });
    expect(result.status).toBe('VERIFIED');
    expect(result.attempts.map((a) => [a.model, a.callFailed])).toEqual([
      ['model 1', true],
      ['model 2', false],
    ]);
    expect(result.trace.map((s) => s.state)).toEqual(['calling', 'escalating', 'calling', 'parsing', 'ambiguityGate', 'confidenceGate', 'verified']);
  });

  it('ends UNCERTAIN once the last model gives up, judged by that model: every call of it failed is call_failure', () => {
    const result = check(unsure('Lyon'), 'q', { maxRetries: 0, escalate: [outage(503), outage(500)] });
    expect(result.status).toBe('UNCERTAIN');
    expect(result.nAttempts).toBe(3);
    expect(result.method).toBe('call_failure');
    expect(result.escalations.map((e) => e.model)).toEqual(['model 2', 'model 3']);
    // The answer the cheap model gave is not reported as the cascade's.
    expect(result.model).toBe('model 3');
  });

  it("falls back to the next model when a sample's call fails for good, and not when one fails once", () => {
    const down = check(outage(401), 'q', { samples: 3, escalate: [sure('Paris')] });
    expect(down.status).toBe('VERIFIED');
    expect(down.attempts.map((a) => a.model)).toEqual(['model 1', 'model 2']);
    // A 503 is a failed sample, not a broken provider: the others vote, and the cascade is not asked.
    let strong = 0;
    const blip = check((_, info) => (info.sample === 1 ? outage(503)() : envelope('Paris', 0.95)), 'q', {
      samples: 3,
      threshold: 0.5,
      escalate: [() => ((strong += 1), envelope('Lyon', 0.95))],
    });
    expect(blip.answer).toBe('Paris');
    expect(blip.escalations).toEqual([]);
    expect(strong).toBe(0);
  });

  it('gives each model its own samples, and sums usage per model', () => {
    const reporting = (answer: string, confidence: number, tokens: number, costUsd: number) => (_: string, info: CallInfo) => {
      info.reportUsage!({ inputTokens: tokens, outputTokens: 0, costUsd });
      return envelope(answer, confidence);
    };
    const result = check(reporting('Lyon', 0.3, 10, 0.001), 'q', {
      maxRetries: 0,
      modelName: 'cheap',
      escalate: [{ call: reporting('Paris', 0.9, 100, 0.01), name: 'strong', samples: 3 }],
    });
    expect(result.status).toBe('VERIFIED');
    expect(result.attempts[1]!.samples).toHaveLength(3);
    expect(result.models).toEqual([
      { model: 'cheap', attempts: 1, calls: 1, usage: { inputTokens: 10, outputTokens: 0, totalTokens: 10, costUsd: 0.001 } },
      { model: 'strong', attempts: 1, calls: 3, usage: { inputTokens: 300, outputTokens: 0, totalTokens: 300, costUsd: 0.03 } },
    ]);
  });

  it("judges a later model's own samples as any vote is judged, by their agreement too, and lists them in result.samples", () => {
    const split = ['Paris', 'Paris', 'Marseille'];
    const strong = (_: string, info: CallInfo) => envelope(split[info.sample!]!, 0.9);
    const alone = check(strong, 'q', { maxRetries: 0, samples: 3 });
    const cascade = check(unsure('Lyon'), 'q', { maxRetries: 0, escalate: [{ call: strong, samples: 3 }] });
    // Two of three agree: 0.67 × 0.9 is below the threshold, whichever model of a run it is.
    expect(alone).toMatchObject({ status: 'UNCERTAIN', confidence: 0.6 });
    expect(cascade).toMatchObject({ status: 'UNCERTAIN', confidence: 0.6 });
    expect(cascade.settings!.confidenceFrom).toBe('hybrid');
    expect(cascade.samples!.map((samples) => samples.length)).toEqual([0, 3]);
  });

  it('does not escalate once the deadline has passed', async () => {
    const slow = (_: string, { signal }: CallInfo) => new Promise<string>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
    let asked = 0;
    const result = await acheck(slow, 'q', {
      deadlineMs: 50,
      escalate: [
        async () => {
          asked += 1;
          return envelope('x', 0.9);
        },
      ],
    });
    expect(result.status).toBe('UNCERTAIN');
    expect(asked).toBe(0);
  });

  it('refuses a bad cascade with a message naming the entry and the fix', () => {
    expect(() => check(sure('x'), 'q', { escalate: [] })).toThrow(/Expected `escalate` to be a list of 1 to 8 models/);
    expect(() => check(sure('x'), 'q', { escalate: Array.from({ length: 9 }, () => sure('y')) })).toThrow(
      new RangeError('Expected `escalate` to be a list of 1 to 8 models to ask in turn, each a function or { call, name?, samples? }, got a list of 9.'),
    );
    expect(() => check(sure('x'), 'q', { escalate: [null as never] })).toThrow(
      new TypeError("Expected `escalate[0]` to be the model's function (prompt, info) => text, or { call, name?, samples? }, got null."),
    );
    expect(() => check(sure('x'), 'q', { escalate: [{ call: 'gpt-4o' } as never] })).toThrow(/Expected `escalate\[0\]\.call` to be the model's function/);
    expect(() => check(sure('x'), 'q', { escalate: [async () => 'x'] as never })).toThrow(/`escalate\[0\]` to be a synchronous function.*use acheck\(\)/);
    expect(() => check(sure('x'), 'q', { escalate: [{ call: sure('y'), name: ' ' }] })).toThrow(/`escalate\[0\]\.name` to be the model's name/);
    expect(() => check(sure('x'), 'q', { escalate: [{ call: sure('y'), nme: 'x' } as never] })).toThrow(/did you mean `name`/);
    // Two models named alike would be one in attempt.model and result.models.
    expect(() => check(sure('x'), 'q', { modelName: 'gpt', escalate: [{ call: sure('y'), name: 'gpt' }] })).toThrow(
      new TypeError('Expected each model of `escalate` to have a name of its own, got `escalate[0].name` named as `modelName`: attempts and `result.models` tell models apart by name, so name them apart.'),
    );
    expect(() => check(sure('x'), 'q', { escalate: [{ call: sure('y'), name: 'model 3' }, sure('z')] })).toThrow(
      /got `escalate\[1\]` \(model 3\) named as `escalate\[0\]\.name`/,
    );
    // A function that is not async but returns a Promise is found when called, and named as the cascade's.
    const promising = () => Promise.resolve(envelope('y', 0.9)) as unknown as string;
    expect(() => check(unsure('x'), 'q', { maxRetries: 0, escalate: [sure('y'), promising] })).not.toThrow();
    expect(() => check(unsure('x'), 'q', { maxRetries: 0, escalate: [unsure('y'), promising] })).toThrow(
      new TypeError('`escalate[1]` returned a Promise, but check() is synchronous; use acheck() for async model calls.'),
    );
  });
});

describe('adaptive samples ({ max, min?, stop? })', () => {
  const byIndex = (answers: readonly string[]) => (_: string, info: CallInfo) => envelope(answers[info.sample!]!, 0.9);

  it('stop when no remaining sample could change the winner: three agreeing of five', () => {
    const calls: number[] = [];
    const result = check((_, info) => (calls.push(info.sample!), envelope('Paris', 0.9)), 'q', { samples: { max: 5 } });
    expect(result.status).toBe('VERIFIED');
    expect(calls).toEqual([0, 1, 2]);
    expect(result.attempts[0]!.samples).toHaveLength(3);
    expect(result.agreement).toBe(1);
  });

  it('ask one more wave, the fewest samples that could settle it, while the vote is open', () => {
    const calls: number[] = [];
    const answers = ['Paris', 'Paris', 'Lyon', 'Paris', 'Lyon'];
    const result = check((_, info) => (calls.push(info.sample!), envelope(answers[info.sample!]!, 0.9)), 'q', { samples: { max: 5 }, threshold: 0.5 });
    // 2–1 with two to ask: one more Paris makes 3–1 with one left, settled.
    expect(calls).toEqual([0, 1, 2, 3]);
    expect(result.answer).toBe('Paris');
    expect(result.agreement).toBe(0.75);
  });

  it('reach the same winner as the fixed path on the same samples', () => {
    for (const answers of [
      ['A', 'B', 'A', 'B', 'A'],
      ['A', 'A', 'B', 'B', 'B'],
      ['A', 'B', 'C', 'A', 'C'],
      ['A', 'A', 'A', 'B', 'B'],
    ]) {
      const fixed = check(byIndex(answers), 'q', { samples: 5 });
      const adaptive = check(byIndex(answers), 'q', { samples: { max: 5 } });
      expect(adaptive.attempts[0]!.answer, answers.join()).toBe(fixed.attempts[0]!.answer);
    }
  });

  it('count a cluster of samples that said the question is ambiguous as a rival: plain samples joining it can still win', () => {
    const script: Array<[string, boolean]> = [
      ['A', false], ['A', false], ['A', false], ['A', false], ['B', false],
      ['Lyon', true], ['Lyon', true], ['Lyon', true], ['Lyon', false], ['Lyon', false],
    ];
    const said = (_: string, info: CallInfo) => {
      const [answer, ambiguous] = script[info.sample!]!;
      return envelope(answer, 0.9, ambiguous ? { ambiguous: true, interpretations: ['x', 'y'] } : {});
    };
    const fixed = check(said, 'q', { samples: 10, threshold: 0.1 });
    const adaptive = check(said, 'q', { samples: { max: 10 }, threshold: 0.1 });
    expect(fixed.attempts[0]!.answer).toBe('Lyon');
    expect(adaptive.attempts[0]!.answer).toBe('Lyon');
  });

  it('abort the calls still in flight once the vote is settled, recorded as skipped, not failed', async () => {
    const aborted: number[] = [];
    const result = await acheck(
      (_, info) => {
        if (info.sample !== 2) return Promise.resolve(envelope('Paris', 0.9));
        return new Promise<string>((_, reject) =>
          info.signal!.addEventListener('abort', () => {
            aborted.push(info.sample!);
            reject(info.signal!.reason);
          }),
        );
      },
      'q',
      { samples: { max: 4, min: 3, stop: { confidence: 0.8 } } },
    );
    expect(result.status).toBe('VERIFIED');
    expect(aborted).toEqual([2]);
    const samples = result.attempts[0]!.samples!;
    expect(samples.map((s) => s.skipped ?? false)).toEqual([false, false, true]);
    expect(samples[2]).toMatchObject({ callFailed: false, parseOk: false, error: 'skipped: the vote was settled before this call answered' });
    // The vote's confidence counts only the samples that answered.
    expect(result.agreement).toBe(1);
    expect(result.callFailed).toBe(false);
  });

  it('stop once a majority saying the question is ambiguous can no longer be overturned', () => {
    let calls = 0;
    const result = check(() => ((calls += 1), envelope('', 0.5, { ambiguous: true, interpretations: ['a', 'b'] })), 'q', { samples: { max: 5 } });
    expect(result.status).toBe('AMBIGUOUS');
    expect(calls).toBe(3);
  });

  it('by a Beta posterior: two agreeing samples are enough at confidence 0.8, not at 0.95', () => {
    const count = (confidence: number) => {
      let calls = 0;
      check(() => ((calls += 1), envelope('Paris', 0.9)), 'q', { samples: { max: 9, stop: { confidence } } });
      return calls;
    };
    // P(p > ½ | 2–0) = 7/8; P(p > ½ | 4–0) = 31/32, P(p > ½ | 3–0) = 15/16 < 0.95.
    expect(count(0.8)).toBe(2);
    expect(count(0.95)).toBe(4);
  });

  it('keep the fixed path exactly as it was: samples: 5 asks five, and its samples carry no skipped field', () => {
    let calls = 0;
    const result = check(() => ((calls += 1), envelope('Paris', 0.9)), 'q', { samples: 5 });
    expect(calls).toBe(5);
    expect(result.attempts[0]!.samples!.every((s) => !('skipped' in s))).toBe(true);
  });

  it('are refused with a message naming the field, the value and the fix', () => {
    expect(() => check(sure('x'), 'q', { samples: { max: 1 } })).toThrow('Expected `samples.max` to be a whole number from 2 to 20');
    expect(() => check(sure('x'), 'q', { samples: { max: 5, min: 6 } })).toThrow('Expected `samples.min` to be a whole number from 1 to 5');
    expect(() => check(sure('x'), 'q', { samples: { max: '5' as never } })).toThrow(TypeError);
    expect(() => check(sure('x'), 'q', { samples: { max: 5, stop: { confidence: 1 } } as never })).toThrow("Expected `samples.stop` to be 'decided'");
    expect(() => check(sure('x'), 'q', { samples: { max: 5, maxx: 3 } as never })).toThrow(/did you mean `max`/);
  });
});

describe('a budget', () => {
  it('of calls: no call starts past it, and the result says the budget stopped it', () => {
    let calls = 0;
    const result = check(() => ((calls += 1), envelope('x', 0.2)), 'q', { maxRetries: 5, budget: { maxCalls: 2 } });
    expect(calls).toBe(2);
    expect(result).toMatchObject({ status: 'UNCERTAIN', method: 'budget', reason: 'BUDGET_SPENT', detail: 'the budget of 2 calls is spent', nAttempts: 2 });
    expect(result.trace.at(-1)!.state).toBe('overBudget');
    expect(result.prompts).toHaveLength(2);
  });

  it('counts call retries, samples and escalations alike', async () => {
    let calls = 0;
    const flaky = async () => {
      calls += 1;
      throw Object.assign(new Error('reset'), { status: 503 });
    };
    const retried = await acheck(flaky, 'q', { callRetries: { retries: 5, minDelayMs: 1, maxDelayMs: 1 }, budget: { maxCalls: 3 } });
    expect(calls).toBe(3);
    expect(retried.method).toBe('budget');
    const sampled = check(() => envelope('x', 0.9), 'q', { samples: 5, budget: { maxCalls: 3 } });
    expect(sampled.attempts[0]!.samples).toHaveLength(3);
    expect(sampled.method).toBe('budget');
    const escalated = check(unsure('x'), 'q', { maxRetries: 1, escalate: [sure('y')], budget: { maxCalls: 2 } });
    expect(escalated.escalations).toEqual([]);
    expect(escalated.trace.map((s) => s.state).slice(-2)).toEqual(['escalating', 'overBudget']);
  });

  it('says it stopped the run when the call retry it could not afford was the last call the run would make', async () => {
    const down = async () => {
      throw Object.assign(new Error('unavailable'), { status: 503 });
    };
    const result = await acheck(down, 'q', { maxRetries: 0, callRetries: { retries: 3, minDelayMs: 1, maxDelayMs: 1 }, budget: { maxCalls: 2 } });
    expect(result).toMatchObject({ status: 'UNCERTAIN', method: 'budget', reason: 'BUDGET_SPENT', detail: 'the budget of 2 calls is spent' });
    expect(result.trace.map((s) => s.state)).toEqual(['calling', 'backingOff', 'calling', 'overBudget']);
    // With no retry left in the policy, the failure ended it, not the budget.
    const spent = await acheck(down, 'q', { maxRetries: 0, callRetries: { retries: 1, minDelayMs: 1, maxDelayMs: 1 }, budget: { maxCalls: 2 } });
    expect(spent.method).toBe('call_failure');
  });

  it("stops a sample's call retries too: a flaky sample is not retried past it", async () => {
    let calls = 0;
    const result = await acheck(
      async (_, info) => {
        calls += 1;
        if (info.sample === 0) throw Object.assign(new Error('reset'), { status: 503 });
        return envelope('Paris', 0.9);
      },
      'q',
      { samples: 3, callRetries: { retries: 5, minDelayMs: 1, maxDelayMs: 1 }, maxRetries: 0, budget: { maxCalls: 3 } },
    );
    expect(calls).toBe(3);
    expect(result.models[0]!.calls).toBe(3);
    // The sample the budget did not retry failed; the two that answered still vote.
    expect(result.attempts[0]!.samples!.map((s) => s.callFailed)).toEqual([true, false, false]);
  });

  it('is asked again when a backoff ends: usage reported while the run waited (a timed-out call\'s, late) can leave none for the retry', async () => {
    let calls = 0;
    const result = await acheck(
      async (_, info) => {
        calls += 1;
        if (calls === 1) {
          await new Promise((resolve) => setTimeout(resolve, 40));
          info.reportUsage!({ inputTokens: 900, outputTokens: 100 });
          throw Object.assign(new Error('too late'), { status: 503 });
        }
        info.reportUsage!({ inputTokens: 10, outputTokens: 10 });
        return envelope('Paris', 0.9);
      },
      'q',
      { timeoutMs: 10, callRetries: { retries: 3, minDelayMs: 120, maxDelayMs: 120 }, budget: { maxTokens: 500 } },
    );
    expect(calls).toBe(1);
    expect(result).toMatchObject({ status: 'UNCERTAIN', method: 'budget', reason: 'BUDGET_SPENT' });
    expect(result.trace.map((s) => s.state)).toEqual(['calling', 'backingOff', 'overBudget']);
    // The attempt keeps the try it made, the retry it scheduled never started.
    expect(result.attempts[0]!.callTries).toHaveLength(1);
    expect(result.models[0]!.calls).toBe(1);
  });

  it("and when a sample's backoff ends: calls other samples started while it waited can leave none for its retry", async () => {
    let calls = 0;
    const result = await acheck(
      async (_, info) => {
        calls += 1;
        if (info.sample === 0) throw Object.assign(new Error('reset'), { status: 503 });
        if (info.sample === 1) return envelope('Paris', 0.9);
        await new Promise((resolve) => setTimeout(resolve, 60));
        return envelope('Paris', 0.9);
      },
      'q',
      { samples: 4, sampleConcurrency: 3, maxRetries: 0, callRetries: { retries: 3, minDelayMs: 30, maxDelayMs: 30 }, budget: { maxCalls: 4 } },
    );
    expect(calls).toBe(4);
    expect(result.models[0]!.calls).toBe(4);
    expect(result.attempts[0]!.samples!.map((s) => s.callFailed)).toEqual([true, false, false, false]);
  });

  it("counts a sample's call retries too: no retry starts past it, though both samples wait out a backoff at once", async () => {
    for (const maxCalls of [2, 3, 5]) {
      let calls = 0;
      const result = await acheck(
        async () => {
          calls += 1;
          throw Object.assign(new Error('reset'), { status: 503 });
        },
        'q',
        { samples: 2, callRetries: { retries: 3, minDelayMs: 1, maxDelayMs: 1 }, budget: { maxCalls } },
      );
      expect(calls, `maxCalls ${maxCalls}`).toBe(maxCalls);
      expect(result).toMatchObject({ status: 'UNCERTAIN', method: 'budget', detail: `the budget of ${maxCalls} calls is spent` });
    }
  });

  it('of tokens: the next call is expected to cost what the calls so far did on average', () => {
    let calls = 0;
    const result = check(
      (_, info) => {
        calls += 1;
        info.reportUsage!({ inputTokens: 60, outputTokens: 40 });
        return envelope('x', 0.2);
      },
      'q',
      { maxRetries: 5, budget: { maxTokens: 250 } },
    );
    expect(calls).toBe(2);
    expect(result.detail).toBe('the budget of 250 tokens would be passed: 200 used, about 100 a call');
    expect(result.usage?.totalTokens).toBe(200);
  });

  it('under a token budget, sends one sample first to learn what a call costs, then only the samples it can pay for', async () => {
    let inFlight = 0;
    const widest: number[] = [];
    const result = await acheck(
      async (_, info) => {
        inFlight += 1;
        widest.push(inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight -= 1;
        info.reportUsage!({ inputTokens: 100, outputTokens: 0 });
        return envelope('Paris', 0.9);
      },
      'q',
      { samples: 5, budget: { maxTokens: 250 } },
    );
    // 100 reported: the next two would make 300, so one more starts; then 200 + 100 would pass 250.
    expect(widest).toEqual([1, 1]);
    expect(result.usage?.totalTokens).toBe(200);
    expect(result.method).toBe('budget');
    expect(result.attempts[0]!.samples).toHaveLength(2);
  });

  it('of tokens, with samples side by side: each call in flight is expected to cost the average too', async () => {
    let calls = 0;
    const result = await acheck(
      async (_, info) => {
        calls += 1;
        await new Promise((resolve) => setTimeout(resolve, 10 + 15 * info.sample!));
        info.reportUsage!({ inputTokens: 300, outputTokens: 0 });
        return envelope('Paris', 0.9);
      },
      'q',
      { samples: 5, sampleConcurrency: 2, budget: { maxTokens: 1000 } },
    );
    // 600 used and one call in flight: a fourth call, at 300 like each before it, would make 1200.
    expect(calls).toBe(3);
    expect(result.usage!.totalTokens).toBe(900);
    expect(result.method).toBe('budget');
  });

  it('fails closed when a call replies without reporting its usage, or its cost', () => {
    const silent = check(() => envelope('x', 0.2), 'q', { maxRetries: 5, budget: { maxTokens: 1000 } });
    expect(silent.nAttempts).toBe(1);
    expect(silent.detail).toMatch(/^usage is unknown: a call replied without reporting what it used/);
    const tokensOnly = check(
      (_, info) => {
        info.reportUsage!({ inputTokens: 1, outputTokens: 1 });
        return envelope('x', 0.2);
      },
      'q',
      { maxRetries: 5, budget: { maxCostUsd: 1 } },
    );
    expect(tokensOnly.nAttempts).toBe(1);
    expect(tokensOnly.detail).toMatch(/^cost is unknown/);
  });

  it('fails closed under a cost limit once any call reports no cost, even after others did: an unpriced model is not free', () => {
    let strong = 0;
    const result = check(
      (_, info) => {
        info.reportUsage!({ inputTokens: 100, outputTokens: 10, costUsd: 0.001 });
        return envelope('Lyon', 0.3);
      },
      'q',
      {
        maxRetries: 5,
        escalate: [{ name: 'strong', call: (_: string, info: CallInfo) => ((strong += 1), info.reportUsage!({ inputTokens: 100_000, outputTokens: 10_000 }), envelope('Paris', 0.3)) }],
        budget: { maxCostUsd: 0.01 },
      },
    );
    expect(strong).toBe(1);
    expect(result.method).toBe('budget');
    expect(result.detail).toBe('cost is unknown: a call reported tokens but no cost, so the budget of $0.01 cannot be kept');
  });

  it('fails closed at the first sample that replies without its usage: no other sample is called after it', async () => {
    let calls = 0;
    const silent = check(() => ((calls += 1), envelope('x', 0.9)), 'q', { samples: 3, budget: { maxTokens: 1000 } });
    expect(calls).toBe(1);
    expect(silent.detail).toMatch(/^usage is unknown/);
    calls = 0;
    const one = await acheck(async () => ((calls += 1), envelope('x', 0.9)), 'q', { samples: { max: 5 }, sampleConcurrency: 1, budget: { maxCostUsd: 1 } });
    expect(calls).toBe(1);
    expect(one.method).toBe('budget');
  });

  it('is refused when it sets no limit, or a limit that is not one', () => {
    expect(() => check(sure('x'), 'q', { budget: {} })).toThrow('Expected `budget` to set `maxCalls`, `maxTokens` or `maxCostUsd`');
    expect(() => check(sure('x'), 'q', { budget: { maxCalls: 0 } })).toThrow('Expected `budget.maxCalls` to be a whole number, 1 or more, such as 10, got 0.');
    expect(() => check(sure('x'), 'q', { budget: { maxCostUsd: -1 } })).toThrow('Expected `budget.maxCostUsd` to be a number of dollars above 0');
    // A limit of another type is a TypeError, with an example of one.
    expect(() => check(sure('x'), 'q', { budget: { maxCalls: '3' as never } })).toThrow(new TypeError('Expected `budget.maxCalls` to be a whole number, 1 or more, such as 10, got "3".'));
    expect(() => check(sure('x'), 'q', { budget: { maxTokens: 2.5 } })).toThrow(new RangeError('Expected `budget.maxTokens` to be a whole number, 1 or more, such as 20000, got 2.5.'));
  });
});

describe('on either engine, and resumed from a store', () => {
  for (const engine of ['stepper', 'actor'] as const) {
    it(`a cascade with adaptive samples under a budget decides alike on the ${engine}`, async () => {
      forceEngine(engine);
      try {
        const answers = ['A', 'B', 'A', 'A', 'B'];
        const result = await acheck(async (_, info) => envelope(answers[info.sample!]!, 0.3), 'q', {
          maxRetries: 0,
          samples: { max: 5 },
          escalate: [{ call: async () => envelope('A', 0.9), name: 'strong' }],
          budget: { maxCalls: 20 },
        });
        expect(result.status).toBe('VERIFIED');
        expect(result.attempts.map((a) => a.model)).toEqual(['model 1', 'strong']);
        expect(result.attempts[0]!.samples!.length).toBe(4);
      } finally {
        forceEngine(null);
      }
    });
  }

  it('a run that crashed mid-cascade resumes with the next model, never asking the first again', async () => {
    const store = memoryStore();
    const asked: string[] = [];
    const cheap = async () => (asked.push('cheap'), envelope('Lyon', 0.3));
    const options = { maxRetries: 0, checkpoint: store, key: 'k', modelName: 'cheap' };
    const process1 = new AbortController();
    const dying = async () => {
      asked.push('strong');
      process1.abort(new Error('the process died'));
      return new Promise<string>(() => {});
    };
    await expect(acheck(cheap, 'q', { ...options, signal: process1.signal, escalate: [{ call: dying, name: 'strong' }] })).rejects.toThrow('the process died');
    const result = await acheck(cheap, 'q', { ...options, escalate: [{ call: async () => (asked.push('strong'), envelope('Paris', 0.9)), name: 'strong' }] });
    expect(asked).toEqual(['cheap', 'strong', 'strong']);
    expect(result.status).toBe('VERIFIED');
    expect(result.attempts.map((a) => a.model)).toEqual(['cheap', 'strong']);
    expect(result.escalations).toEqual([{ attempt: 1, model: 'strong' }]);
  });

  it('a run that crashed mid-wave asks again only the attempt under way; its settled attempts stay', async () => {
    const store = memoryStore();
    const calls: string[] = [];
    const split = ['A', 'B', 'C', 'A', 'B'];
    const options = { maxRetries: 1, samples: { max: 5 }, checkpoint: store, key: 'w' };
    const process1 = new AbortController();
    const first = async (_: string, info: CallInfo) => {
      calls.push(`${info.attempt}.${info.sample}`);
      if (info.attempt === 1 && info.sample === 1) process1.abort(new Error('the process died'));
      return envelope(info.attempt === 0 ? split[info.sample!]! : 'A', 0.9);
    };
    await expect(acheck(first, 'q', { ...options, signal: process1.signal })).rejects.toThrow('the process died');
    const before = calls.length;
    const result = await acheck(async (_: string, info: CallInfo) => (calls.push(`${info.attempt}.${info.sample}`), envelope('A', 0.9)), 'q', options);
    expect(result.status).toBe('REPAIRED');
    // Attempt 0 (a split vote of five) is not asked again; attempt 1 is, from its first wave.
    expect(calls.slice(before)).toEqual(['1.0', '1.1', '1.2']);
    expect(result.attempts[0]!.samples).toHaveLength(5);
    expect(result.prompts.map((p) => p.kind)).toEqual(['first', 'disagreement']);
  });
});

describe('a clarified run under a budget, resumed from a store', () => {
  const readings = { ambiguous: true, interpretations: ['France the country', 'France the ship'] };

  it('resumes mid-round with its budget at the limit: the wait before it is judged by what the run had spent then', async () => {
    const store = memoryStore();
    const options = { checkpoint: store, key: 'k', maxRetries: 5, budget: { maxCalls: 3 }, awaitClarification: true };
    expect((await acheck(async () => envelope('', 0.6, readings), 'q', options)).status).toBe('AMBIGUOUS');
    const process1 = new AbortController();
    const dying = async (_: string, info: CallInfo) => {
      if (info.attempt < 2) return envelope('Paris', 0.2);
      process1.abort(new Error('the process died'));
      return new Promise<string>(() => {});
    };
    await expect(acheck(dying, 'q', { ...options, clarification: 0, signal: process1.signal })).rejects.toThrow('the process died');
    let calls = 0;
    const result = await acheck(async () => ((calls += 1), envelope('Paris', 0.2)), 'q', options);
    // The call the process died in is made again; none after it, the budget being spent.
    expect(calls).toBe(1);
    expect(result).toMatchObject({ status: 'UNCERTAIN', method: 'budget' });
    expect(result.clarifications).toHaveLength(1);
  });

  it('waits in a store and continues with the person\'s answer when its models are named: a committed attempt records its model, the draft does not', async () => {
    for (const models of [{ modelName: 'gpt-4o-mini' }, { modelName: 'cheap', escalate: [{ call: async () => envelope('', 0.6, readings), name: 'strong' }] }]) {
      const store = memoryStore();
      const options = { checkpoint: store, key: 'k', maxRetries: 0, awaitClarification: true, ...models };
      // Named alone, the model says the question is ambiguous; in the cascade, the strong model does.
      const first = models.escalate ? async () => envelope('Lyon', 0.3) : async () => envelope('', 0.6, readings);
      const asked = await acheck(first, 'q', options);
      expect(asked.status).toBe('AMBIGUOUS');
      const answered = await acheck(async () => envelope('Paris', 0.9), 'q', { ...options, clarification: 0 });
      expect(answered.status).toBe('VERIFIED');
      expect(answered.model).toBe(models.modelName);
    }
  });

  it('resumes ended AMBIGUOUS where its budget kept it from waiting', async () => {
    const store = memoryStore();
    const options = { maxRetries: 5, budget: { maxCalls: 1 }, awaitClarification: true };
    const dying = { ...store, delete: () => Promise.reject(new Error('the process died')) };
    await expect(acheck(async () => envelope('', 0.6, readings), 'q', { ...options, checkpoint: dying, key: 'k' })).rejects.toThrow('the process died');
    const result = await acheck(async () => envelope('Paris', 0.9), 'q', { ...options, checkpoint: store, key: 'k' });
    expect(result.status).toBe('AMBIGUOUS');
    expect(result.trace.at(-1)!.state).toBe('ambiguous');
  });
});

describe('in a workflow', () => {
  it('the machine calls each model of its cascade itself, and a provided callModel actor is told the stage', async () => {
    const { createActor, fromPromise, toPromise } = await import('xstate');
    const { checkpointMachine } = await import('../../machines/index.js');
    const output = await toPromise(
      createActor(checkpointMachine, {
        input: { prompt: 'q', maxRetries: 0, model: () => envelope('Lyon', 0.3), modelName: 'cheap', escalate: [{ name: 'strong', model: () => envelope('Paris', 0.9) }] },
      }).start(),
    );
    expect(output.status).toBe('VERIFIED');
    expect(output.answer).toBe('Paris');
    expect(output.attempts.map((a) => a.model)).toEqual(['cheap', 'strong']);
    const stages: number[] = [];
    const routed = checkpointMachine.provide({
      actors: { callModel: fromPromise(async ({ input }) => (stages.push(input.stage ?? -1), envelope(input.stage === 0 ? 'Lyon' : 'Paris', input.stage === 0 ? 0.3 : 0.9))) },
    });
    const viaActor = await toPromise(createActor(routed, { input: { prompt: 'q', maxRetries: 0, escalate: [{ name: 'strong' }] } }).start());
    expect(stages).toEqual([0, 1]);
    expect(viaActor.answer).toBe('Paris');
  });
});

describe('a clarified question', () => {
  it('is not asked when clarify() is given a budget the result already spent: no call starts past it', async () => {
    const readings = { ambiguous: true, interpretations: ['France the country', 'France the ship'] };
    const asked = await acheck(async () => envelope('', 0.6, readings), 'Capital of France?', { maxRetries: 3 });
    const callFn = vi.fn(async () => envelope('Paris', 0.9));
    for (const choice of [0, { rephrased: 'Which city is the capital of the country France?' }]) {
      const clarified = await clarify(asked, choice, callFn, { budget: { maxCalls: 1 } });
      expect(clarified).toMatchObject({ status: 'UNCERTAIN', method: 'budget', detail: 'the budget of 1 call is spent' });
      expect(clarified.trace.map((s) => s.state).slice(-2)).toEqual(['awaitingClarification', 'overBudget']);
    }
    expect(callFn).not.toHaveBeenCalled();
  });

  it('is refused by clarify() with the fix when its options do not name the models the result was checked with', async () => {
    const readings = { ambiguous: true, interpretations: ['France the country', 'France the ship'] };
    const asked = check(unsure('Lyon'), 'Capital of France?', { maxRetries: 0, modelName: 'cheap', escalate: [{ call: () => envelope('', 0.6, readings), name: 'strong' }] });
    const fix = /^`result` was checked with a cascade of models that clarify\(\)'s options do not name alike, and a result cannot hold the models' functions: pass `modelName` and `escalate` again/;
    await expect(clarify(asked, 0, async () => envelope('Paris', 0.9))).rejects.toThrow(fix);
    await expect(clarify(asked, 0, async () => envelope('Paris', 0.9), { escalate: [{ call: async () => envelope('x', 0.9), name: 'strong' }] })).rejects.toThrow(fix);
    const named = check(() => envelope('', 0.6, readings), 'q', { modelName: 'gpt-4o-mini' });
    const refused = clarify(named, 0, async () => envelope('Paris', 0.9));
    await expect(refused).rejects.toThrow(/^`result` was checked with a named model that clarify\(\)'s options do not name alike/);
    // The model's name is not quoted.
    await expect(refused).rejects.not.toThrow('gpt-4o-mini');
    await expect(clarify(named, 0, async () => envelope('Paris', 0.9), { modelName: 'gpt-4o-mini' })).resolves.toMatchObject({ status: 'VERIFIED' });
  });

  it("spends what is left of the budget, continued by clarify() as by a store: a clarified round does not start it afresh", async () => {
    const readings = { ambiguous: true, interpretations: ['France the country', 'France the ship'] };
    const options = { maxRetries: 5, budget: { maxCalls: 2 } };
    let calls = 0;
    const asked = await acheck(async () => ((calls += 1), envelope('', 0.6, readings)), 'Capital of France?', options);
    expect(asked.status).toBe('AMBIGUOUS');
    const clarified = await clarify(asked, 0, async () => ((calls += 1), envelope('Paris', 0.2)), options);
    expect(calls).toBe(2);
    expect(clarified).toMatchObject({ status: 'UNCERTAIN', method: 'budget', detail: 'the budget of 2 calls is spent' });
    // Tokens alike: the clarified round's calls are expected to cost what the first round's did.
    const reporting = (answer: string, extra: object) => async (_: string, info: CallInfo) => {
      calls += 1;
      info.reportUsage!({ inputTokens: 100, outputTokens: 0 });
      return envelope(answer, 0.2, extra);
    };
    calls = 0;
    const tokens = { maxRetries: 5, budget: { maxTokens: 350 } };
    const first = await acheck(reporting('', readings), 'Capital of France?', tokens);
    const again = await clarify(first, 0, reporting('Paris', {}), tokens);
    // 100 used; 200 after one more; a third at 100 would make 300, a fourth 400.
    expect(calls).toBe(3);
    expect(again.usage!.totalTokens).toBe(300);
    expect(again.method).toBe('budget');
  });


  it('starts again at the first model of the cascade: it is a new question', async () => {
    const { clarify } = await import('../../src/index.js');
    const readings = { ambiguous: true, interpretations: ['France the country', 'France the ship'] };
    const options = { maxRetries: 0, modelName: 'cheap', escalate: [{ call: () => envelope('', 0.6, readings), name: 'strong' }] };
    const asked = check(unsure('Lyon'), 'Capital of France?', options);
    expect(asked.status).toBe('AMBIGUOUS');
    expect(asked.attempts.map((a) => a.model)).toEqual(['cheap', 'strong']);
    const clarified = await clarify(asked, 0, async () => envelope('Paris', 0.9), { ...options, escalate: [{ call: async () => envelope('', 0.6, readings), name: 'strong' }] });
    expect(clarified.status).toBe('VERIFIED');
    expect(clarified.attempts.map((a) => a.model)).toEqual(['cheap', 'strong', 'cheap']);
    expect(clarified.model).toBe('cheap');
  });
});

describe('the pricing wrapper docs/spend.md shows', () => {
  it('turns reported tokens into dollars, so a cost budget can be kept with adapters that report tokens only', async () => {
    const priced =
      (callFn: (prompt: string, info: CallInfo) => Promise<string>, inputPerMillion: number, outputPerMillion: number) => (prompt: string, info: CallInfo) =>
        callFn(prompt, {
          ...info,
          reportUsage: (usage) => info.reportUsage!({ ...usage, costUsd: (usage.inputTokens * inputPerMillion + usage.outputTokens * outputPerMillion) / 1e6 }),
        });
    // Reports tokens only, as the adapters do.
    const tokensOnly = (confidence: number) => async (_: string, info: CallInfo) => {
      info.reportUsage!({ inputTokens: 1_000, outputTokens: 100 });
      return envelope('Paris', confidence);
    };
    const unpriced = await acheck(tokensOnly(0.3), 'q', { maxRetries: 3, budget: { maxCostUsd: 0.01 } });
    expect(unpriced.detail).toMatch(/^cost is unknown/);
    const result = await acheck(priced(tokensOnly(0.3), 0.15, 0.6), 'q', { maxRetries: 0, escalate: [{ call: priced(tokensOnly(0.9), 2.5, 10), name: 'gpt-4o' }], budget: { maxCostUsd: 0.01 } });
    expect(result.status).toBe('VERIFIED');
    expect(result.models.map((m) => m.usage?.costUsd)).toEqual([0.00021, 0.0035]);
  });
});
