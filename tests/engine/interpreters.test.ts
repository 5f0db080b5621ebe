import { describe, expect, it, vi } from 'vitest';
import { acheck, check } from '../../src/index.js';
import { envelope, scripted } from '../fixtures/helpers.js';

// Make the parser blow up on one marker reply, to stand for any bug inside a machine action.
vi.mock('../../src/decide/attempt.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/decide/attempt.js')>();
  return {
    ...original,
    attemptFromReply: (rawText: string, tries: Parameters<typeof original.attemptFromReply>[1]) => {
      if (rawText === 'CRASH THE ACTION') throw new Error('bug inside the machine');
      return original.attemptFromReply(rawText, tries);
    },
  };
});

describe('the interpreters', () => {
  it('check() returns the result itself, synchronously, not a Promise', () => {
    let finished = false;
    queueMicrotask(() => {
      finished = true;
    });
    const result = check(scripted(['x', envelope('Paris', 0.9)]).sync, 'q');
    expect(finished).toBe(false);
    expect(typeof (result as unknown as { then?: unknown }).then).toBe('undefined');
    expect(result.status).toBe('REPAIRED');
  });

  it('the trace lists every state entered, with the attempt at each', () => {
    const result = check(scripted([envelope('Paris', 0.2), envelope('Paris', 0.9)]).sync, 'q');
    expect(result.trace.map(({ state, attempt }) => `${state}@${attempt}`)).toEqual([
      'calling@0',
      'parsing@0',
      'ambiguityGate@0',
      'confidenceGate@0',
      'reconsidering@0',
      'calling@1',
      'parsing@1',
      'ambiguityGate@1',
      'confidenceGate@1',
      'repaired@1',
    ]);
  });

  it('the trace passes validationGate when a validator judges the answer', () => {
    const result = check(() => envelope('Paris', 0.9), 'q', { validator: () => true });
    expect(result.trace.map((s) => s.state)).toEqual(['calling', 'parsing', 'ambiguityGate', 'validationGate', 'confidenceGate', 'verified']);
  });

  it('an error thrown inside the machine surfaces from check() and rejects acheck()', async () => {
    expect(() => check(() => 'CRASH THE ACTION', 'q')).toThrow('bug inside the machine');
    await expect(acheck(async () => 'CRASH THE ACTION', 'q')).rejects.toThrow('bug inside the machine');
  });

  it('an error inside the machine is never rethrown later from a timer', async () => {
    const uncaught = vi.fn();
    process.on('uncaughtException', uncaught);
    try {
      expect(() => check(() => 'CRASH THE ACTION', 'q')).toThrow();
      await acheck(async () => 'CRASH THE ACTION', 'q').catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(uncaught).not.toHaveBeenCalled();
    } finally {
      process.off('uncaughtException', uncaught);
    }
  });

  it('a model that calls check() from inside its own call gets an independent run', () => {
    const outer = check(
      () => {
        const inner = check(() => envelope('inner', 0.9), 'inner question');
        return envelope(`outer saw ${inner.answer}`, 0.9);
      },
      'outer question',
    );
    expect(outer.answer).toBe('outer saw inner');
  });
});
