import { describe, expect, it, vi } from 'vitest';
import { type Attempt, acheck, check, type ClarificationChoice, clarify, memoryStore } from '../../src/index.js';
import { forceEngine } from '../../src/engine/engines.js';
import { decided, envelope, scripted, type Step } from '../fixtures/helpers.js';

/** Runs a script through both entry points and insists they agree. */
async function both(steps: Step[], options: Parameters<typeof check>[2] = {}) {
  const sync = check(scripted(steps).sync, 'q', options);
  const async = await acheck(scripted(steps).async, 'q', options);
  expect(decided(async)).toEqual(decided(sync));
  return sync;
}

const ambiguousReply = envelope('Paris, France', 0.8, {
  ambiguous: true,
  interpretations: ['Paris, France', 'Paris, Texas'],
  chosen_interpretation: 'Paris, France',
});

describe('§7 decisions', () => {
  it('§7.1 parsed and ambiguous → AMBIGUOUS at once, never retried, however many retries remain', async () => {
    const result = await both([ambiguousReply], { maxRetries: 3 });
    expect(result.status).toBe('AMBIGUOUS');
    expect(result.nAttempts).toBe(1);
    expect(result.interpretations).toEqual(['Paris, France', 'Paris, Texas']);
    expect(result.attempts[0]?.chosenInterpretation).toBe('Paris, France');
  });

  it('§7.1 ambiguity wins over low confidence and a failing validator', async () => {
    const validator = vi.fn(() => false);
    const lowConfidence = envelope('', 0.1, { ambiguous: true, interpretations: ['a', 'b'] });
    expect((await both([lowConfidence], { validator })).status).toBe('AMBIGUOUS');
    expect(validator).not.toHaveBeenCalled();
  });

  it('§7.2 parsed and failed validation → retry, however confident', async () => {
    const result = await both([envelope('Lyon', 1), envelope('Paris', 0.8)], { validator: (a) => a === 'Paris' });
    expect(result.status).toBe('REPAIRED');
  });

  it('§7.3 confidence >= threshold on attempt 0 → VERIFIED (the threshold itself is enough)', async () => {
    expect((await both([envelope('Paris', 0.7)])).status).toBe('VERIFIED');
    expect((await both([envelope('Paris', 0.5)], { threshold: 0.5 })).status).toBe('VERIFIED');
  });

  it('§7.3 accepted after a retry → REPAIRED, also after a failed call or parse failure', async () => {
    expect((await both([envelope('Paris', 0.2), envelope('Paris', 0.9)])).status).toBe('REPAIRED');
    expect((await both([{ throws: new Error('x') }, envelope('Paris', 0.9)])).status).toBe('REPAIRED');
    expect((await both(['garbage', envelope('Paris', 0.9)])).status).toBe('REPAIRED');
  });

  it('§7.4 otherwise retry while attempts remain, then UNCERTAIN', async () => {
    const result = await both([envelope('a', 0.1), envelope('b', 0.2), envelope('c', 0.3)], { maxRetries: 2 });
    expect(result.status).toBe('UNCERTAIN');
    expect(result.nAttempts).toBe(3);
  });

  it('§1 maxRetries bounds the calls: at most maxRetries + 1', async () => {
    for (const maxRetries of [0, 1, 4]) {
      const model = scripted(Array.from({ length: 10 }, () => 'nope'));
      check(model.sync, 'q', { maxRetries });
      expect(model.prompts).toHaveLength(maxRetries + 1);
    }
  });

  it('§1 the defaults are threshold 0.7 and maxRetries 1', async () => {
    expect((await both([envelope('a', 0.69), envelope('a', 0.69), envelope('a', 0.69)])).nAttempts).toBe(2);
    expect((await both([envelope('a', 0.7)])).status).toBe('VERIFIED');
  });

  it('§7 BLOCKED is never produced by check/acheck', async () => {
    const statuses = new Set<string>();
    for (const steps of [[envelope('a', 0.9)], ['x', 'y'], [ambiguousReply], [envelope('a', 0.1), envelope('a', 0.9)]]) {
      statuses.add((await both(steps)).status);
    }
    expect(statuses).not.toContain('BLOCKED');
  });
});

describe('§7 onAttempt', () => {
  it('is called once per attempt, in order, with the very objects that end up in result.attempts', () => {
    const seen: Array<[number, Attempt]> = [];
    const result = check(scripted(['x', envelope('a', 0.2), envelope('a', 0.9)]).sync, 'q', {
      maxRetries: 2,
      onAttempt: (index, attempt) => seen.push([index, attempt]),
    });
    expect(seen.map(([index]) => index)).toEqual([0, 1, 2]);
    seen.forEach(([index, attempt]) => expect(attempt).toBe(result.attempts[index]));
  });

  it('sees the attempt after the validator ran', () => {
    const seen: Attempt[] = [];
    check(() => envelope('Lyon', 0.9), 'q', { maxRetries: 0, validator: () => [false, 'no'], onAttempt: (_, a) => seen.push(a) });
    expect(seen[0]?.validationError).toBe('no');
  });

  it('runs before the next call', () => {
    const events: string[] = [];
    check(
      (_, { attempt }) => {
        events.push(`call ${attempt}`);
        return attempt === 0 ? 'x' : envelope('a', 0.9);
      },
      'q',
      { onAttempt: (index) => events.push(`report ${index}`) },
    );
    expect(events).toEqual(['call 0', 'report 0', 'call 1', 'report 1']);
  });

  it('cannot change the decision: attempts are frozen', () => {
    const result = check(scripted([envelope('a', 0.2), envelope('b', 0.9)]).sync, 'q', {
      onAttempt: (_, attempt) => {
        expect(Object.isFrozen(attempt)).toBe(true);
        expect(() => {
          (attempt as { confidence: number | null }).confidence = 1;
        }).toThrow(TypeError);
      },
    });
    expect(result.status).toBe('REPAIRED');
  });

  it('exceptions from onAttempt propagate and stop the run', async () => {
    const callFn = vi.fn(() => 'x');
    const boom = new Error('observer failed');
    const onAttempt = () => {
      throw boom;
    };
    expect(() => check(callFn, 'q', { onAttempt, maxRetries: 3 })).toThrow(boom);
    await expect(acheck(callFn, 'q', { onAttempt, maxRetries: 3 })).rejects.toBe(boom);
    expect(callFn).toHaveBeenCalledTimes(2);
  });

  it('acheck() awaits an onAttempt that returns a Promise, and propagates its rejection', async () => {
    const events: string[] = [];
    await acheck(
      async (_, { attempt }) => {
        events.push(`call ${attempt}`);
        return attempt === 0 ? 'x' : envelope('a', 0.9);
      },
      'q',
      {
        onAttempt: async (index) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          events.push(`reported ${index}`);
        },
      },
    );
    expect(events).toEqual(['call 0', 'reported 0', 'call 1', 'reported 1']);
    await expect(acheck(() => 'x', 'q', { onAttempt: () => Promise.reject(new Error('log sink down')) })).rejects.toThrow(
      'log sink down',
    );
  });

  it('check(): an onAttempt returning a Promise is a TypeError, its rejection handled', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const onAttempt = () => Promise.reject(new Error('x')) as unknown as void;
      expect(() => check(() => envelope('a', 0.9), 'q', { onAttempt })).toThrow(/Promise.*acheck/);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});

describe('§7.1 with awaitClarification: an ambiguous question waits, and each clarified round decides afresh', () => {
  const ambiguous = envelope('Paris, France', 0.8, { ambiguous: true, interpretations: ['Paris, France', 'Paris, Texas'] });

  /**
   * Runs `replies` (by attempt) with a store: first with awaitClarification, then continued
   * with `choice`; on both engines, which must agree, and equal to acheck() + clarify() in
   * memory. The two calls' results and onAttempt indexes.
   */
  async function waited(replies: readonly string[], choice: ClarificationChoice, options: { maxRetries?: number; maxClarifications?: number; validator?: () => boolean } = {}) {
    const call = async (_prompt: string, { attempt }: { attempt: number }) => replies[attempt] ?? 'script exhausted';
    const runs = [];
    for (const engine of ['stepper', 'actor'] as const) {
      forceEngine(engine);
      try {
        const store = memoryStore();
        const reported: number[][] = [[], []];
        const kept = (round: 0 | 1) => ({ ...options, checkpoint: store, key: 'k', onAttempt: (index: number) => void reported[round]!.push(index) });
        const first = await acheck(call, 'Capital of Paris?', { ...kept(0), awaitClarification: true });
        const waiting = store.size;
        const second = first.status === 'AMBIGUOUS' && waiting === 1 ? await acheck(call, 'Capital of Paris?', { ...kept(1), clarification: choice }) : null;
        runs.push({ first: decided(first.toJSON()), second: second && decided(second.toJSON()), reported, waiting, left: store.size });
      } finally {
        forceEngine(null);
      }
    }
    expect(runs[1]).toEqual(runs[0]);
    const run = runs[0]!;
    if (run.second) {
      const held = await clarify(await acheck(call, 'Capital of Paris?', options), choice, call, options);
      expect(run.second).toEqual(decided(held.toJSON()));
    }
    return run;
  }

  it('ambiguous: AMBIGUOUS at once, kept waiting, however many retries remain; ambiguity wins over low confidence and a failing validator', async () => {
    const validator = vi.fn(() => false);
    const lowConfidence = envelope('', 0.1, { ambiguous: true, interpretations: ['a', 'b'] });
    for (const reply of [ambiguous, lowConfidence]) {
      const { first, waiting, reported } = await waited([reply], 0, { maxRetries: 3, validator });
      expect(first).toMatchObject({ status: 'AMBIGUOUS', nAttempts: 1, clarifications: [] });
      expect(waiting).toBe(1);
      expect(reported[0]).toEqual([0]);
    }
    expect(validator).not.toHaveBeenCalled();
  });

  it('retries are counted per round: a round that follows a retry and a clarification gets maxRetries of its own', async () => {
    const replies = [envelope('Lyon', 0.2), ambiguous, envelope('Austin', 0.3), envelope('Austin', 0.9)];
    const { first, second, reported } = await waited(replies, 'Paris, Texas', { maxRetries: 1 });
    expect(first).toMatchObject({ status: 'AMBIGUOUS', nAttempts: 2 });
    expect(second).toMatchObject({ status: 'REPAIRED', answer: 'Austin', nAttempts: 4 });
    expect(second!.prompts.map((p) => p.kind)).toEqual(['first', 'confidence', 'clarification', 'confidence']);
    // Each attempt reported once, by the call that made it.
    expect(reported).toEqual([[0, 1], [2, 3]]);
  });

  it("the first attempt of a clarified round accepted is VERIFIED, whatever round 1's retries were", async () => {
    const { second } = await waited([envelope('Lyon', 0.2), ambiguous, envelope('Austin', 0.9)], 1, { maxRetries: 1 });
    expect(second).toMatchObject({ status: 'VERIFIED', method: 'confidence', nAttempts: 3 });
  });

  it("a clarified round that spends its retries is UNCERTAIN; maxRetries 0 leaves it one attempt", async () => {
    const { second } = await waited([ambiguous, envelope('Austin', 0.3), envelope('Austin', 0.4)], { rephrased: 'Which state is Paris, Texas in?' }, { maxRetries: 1 });
    expect(second).toMatchObject({ status: 'UNCERTAIN', nAttempts: 3 });
    const { second: once } = await waited([ambiguous, envelope('Austin', 0.3)], 1, { maxRetries: 0 });
    expect(once).toMatchObject({ status: 'UNCERTAIN', nAttempts: 2 });
  });

  it('maxClarifications 0: nothing waits, the run ends AMBIGUOUS and its checkpoint is deleted', async () => {
    const { first, waiting, second } = await waited([ambiguous], 0, { maxClarifications: 0 });
    expect(first).toMatchObject({ status: 'AMBIGUOUS' });
    expect(first.trace.at(-1)?.state).toBe('ambiguous');
    expect(waiting).toBe(0);
    expect(second).toBeNull();
  });
});
