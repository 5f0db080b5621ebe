import { describe, expect, it } from 'vitest';
import { acheck, check, memoryStore } from '../../src/index.js';
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
    expect(() => check(sure('x'), 'q', { escalate: [] })).toThrow(/Expected `escalate` to be a list of 1 to 8 models.*got an empty list; leave `escalate` out for no cascade\./);
    expect(() => check(sure('x'), 'q', { escalate: Array.from({ length: 9 }, () => sure('y')) })).toThrow(/got 9 models\./);
    expect(() => check(sure('x'), 'q', { escalate: [{ call: 'gpt-4o' } as never] })).toThrow(/Expected `escalate\[0\]\.call` to be the model's function/);
    expect(() => check(sure('x'), 'q', { escalate: [async () => 'x'] as never })).toThrow(/`escalate\[0\]` to be a synchronous function.*use acheck\(\)/);
    expect(() => check(sure('x'), 'q', { escalate: [{ call: sure('y'), name: ' ' }] })).toThrow(/`escalate\[0\]\.name` to be the model's name/);
    expect(() => check(sure('x'), 'q', { escalate: [{ call: sure('y'), nme: 'x' } as never] })).toThrow(/did you mean `name`/);
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

  it('is refused when it sets no limit, or a limit that is not one', () => {
    expect(() => check(sure('x'), 'q', { budget: {} })).toThrow('Expected `budget` to set `maxCalls`, `maxTokens` or `maxCostUsd`');
    expect(() => check(sure('x'), 'q', { budget: { maxCalls: 0 } })).toThrow('Expected `budget.maxCalls` to be a whole number, 1 or more, got 0.');
    expect(() => check(sure('x'), 'q', { budget: { maxCostUsd: -1 } })).toThrow('Expected `budget.maxCostUsd` to be a number of dollars above 0');
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
