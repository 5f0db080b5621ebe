import { describe, expect, it } from 'vitest';
import { checkWithEvidence } from '../../src/index.js';

/** The states a checkWithEvidence() run passed through, in order. */
function statesOf(...args: Parameters<typeof checkWithEvidence>): string[] {
  const result = checkWithEvidence(...args);
  for (const step of result.trace) expect(step.attempt).toBe(0);
  return result.trace.map((step) => step.state);
}

describe('the trace of checkWithEvidence() records every gate it passed, then its final state', () => {
  it('an agreeing verdict passes all four gates and ends verified', () => {
    expect(statesOf('Paris', ['Paris'], () => true)).toEqual(['answerGate', 'evidenceGate', 'comparing', 'scoreGate', 'verified']);
  });

  it('a score below the threshold passes all four gates and ends blocked', () => {
    expect(statesOf('Lyon', ['Paris'], () => 0.2)).toEqual(['answerGate', 'evidenceGate', 'comparing', 'scoreGate', 'blocked']);
  });

  it('a blank answer stops at the answer gate, before the evidence is looked at', () => {
    expect(statesOf('  ', ['Paris'], () => true)).toEqual(['answerGate', 'uncertain']);
  });

  it('missing evidence stops at the evidence gate, before the comparator is called', () => {
    expect(statesOf('Paris', [], () => true)).toEqual(['answerGate', 'evidenceGate', 'uncertain']);
  });

  it('a throwing comparator ends uncertain straight from comparing, without a score gate', () => {
    const states = statesOf('Paris', ['Paris'], () => {
      throw new Error('down');
    });
    expect(states).toEqual(['answerGate', 'evidenceGate', 'comparing', 'uncertain']);
  });

  it('an invalid score reaches the score gate and ends uncertain', () => {
    expect(statesOf('Paris', ['Paris'], () => 2)).toEqual(['answerGate', 'evidenceGate', 'comparing', 'scoreGate', 'uncertain']);
  });
});
