import { describe, expect, it, vi } from 'vitest';
import { type CompareFn, checkWithEvidence } from '../../src/index.js';

type Loose = (answer: unknown, evidence: unknown, compareFn: unknown, options?: unknown) => unknown;
const loose = checkWithEvidence as unknown as Loose;

const contains: CompareFn<string> = (answer, evidence) => evidence.some((doc) => doc.includes(answer));

describe('§9 checkWithEvidence', () => {
  it('§9 a boolean true verdict is VERIFIED with score 1; the threshold is not consulted', () => {
    const result = checkWithEvidence('Paris', ['Paris is the capital of France.'], contains, { evidenceThreshold: 1 });
    expect(result).toMatchObject({ status: 'VERIFIED', answer: 'Paris', confidence: 1, evidenceAgreement: 1, reason: null, detail: null });
  });

  it('§9.6 false is BLOCKED with EVIDENCE_DISAGREES, score 0, and a detail saying the comparator returned false', () => {
    const result = checkWithEvidence('Lyon', ['Paris is the capital of France.'], contains, { evidenceThreshold: 0 });
    expect(result).toMatchObject({ status: 'BLOCKED', reason: 'EVIDENCE_DISAGREES', confidence: 0, evidenceAgreement: 0 });
    expect(result.detail).toMatch(/false/);
    expect(result.detail).not.toMatch(/threshold/);
    expect(result.detail).not.toContain('0.7');
  });

  it('§9.7 a score >= evidenceThreshold is VERIFIED, below it BLOCKED with score and threshold in the detail', () => {
    expect(checkWithEvidence('a', ['e'], () => 0.7)).toMatchObject({ status: 'VERIFIED', evidenceAgreement: 0.7 });
    const blocked = checkWithEvidence('a', ['e'], () => 0.55, { evidenceThreshold: 0.6 });
    expect(blocked).toMatchObject({ status: 'BLOCKED', reason: 'EVIDENCE_DISAGREES', confidence: 0.55, evidenceAgreement: 0.55 });
    expect(blocked.detail).toContain('0.55');
    expect(blocked.detail).toContain('0.6');
  });

  it('§9.3 a null, empty or blank answer is UNCERTAIN/EMPTY_ANSWER with answer null, comparator not called', () => {
    const compareFn = vi.fn(() => true);
    for (const answer of [null, undefined, '', '  \n']) {
      const result = checkWithEvidence(answer, ['e'], compareFn);
      expect(result).toMatchObject({ status: 'UNCERTAIN', reason: 'EMPTY_ANSWER', answer: null, confidence: null, evidenceAgreement: null });
      expect(result.detail).toMatch(/empty/);
    }
    expect(compareFn).not.toHaveBeenCalled();
  });

  it('§9.4 no evidence (null, undefined, []) is UNCERTAIN/NO_EVIDENCE', () => {
    for (const evidence of [null, undefined, []]) {
      const result = checkWithEvidence('a', evidence, () => true);
      expect(result).toMatchObject({ status: 'UNCERTAIN', reason: 'NO_EVIDENCE', answer: 'a' });
      expect(result.detail).toMatch(/evidence/);
    }
  });

  it('§9.5 a throwing comparator is UNCERTAIN/COMPARE_FAILED with "<name>: <first 200 characters>"', () => {
    const long = 'x'.repeat(300);
    const result = checkWithEvidence('a', ['e'], () => {
      throw new RangeError(long);
    });
    expect(result).toMatchObject({ status: 'UNCERTAIN', reason: 'COMPARE_FAILED', confidence: null, evidenceAgreement: null });
    expect(result.detail).toBe(`RangeError: ${'x'.repeat(200)}`);
    const plain = checkWithEvidence('a', ['e'], () => {
      throw 'nope';
    });
    expect(plain.detail).toBe('Error: nope');
  });

  it('§9.5 the 200 characters never split a surrogate pair', () => {
    const result = checkWithEvidence('a', ['e'], () => {
      throw new Error('😀'.repeat(300));
    });
    expect(result.detail).toBe(`Error: ${'😀'.repeat(200)}`);
  });

  it('§9.5 a comparator returning a Promise is a TypeError, its rejection handled', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      expect(() => loose('a', ['e'], () => Promise.reject(new Error('x')))).toThrow(/synchronous/);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });

  it('§9.7 any other value is UNCERTAIN/INVALID_SCORE showing the value [differs: numeric strings are not converted]', () => {
    const cases: Array<[unknown, string]> = [
      [1.5, '1.5'],
      [-0.1, '-0.1'],
      [Number.NaN, 'NaN'],
      [Number.POSITIVE_INFINITY, 'Infinity'],
      ['0.9', '"0.9"'],
      [null, 'null'],
      [undefined, 'undefined'],
      [{ score: 1 }, '{"score":1}'],
    ];
    for (const [returned, shown] of cases) {
      const result = checkWithEvidence('a', ['e'], () => returned as number);
      expect(result).toMatchObject({ status: 'UNCERTAIN', reason: 'INVALID_SCORE', confidence: null });
      expect(result.detail).toContain(shown);
    }
  });

  it('§9.7 the shown value is cut to 200 characters', () => {
    const result = checkWithEvidence('a', ['e'], () => 'y'.repeat(500) as unknown as number);
    expect(result.detail).toContain(`"${'y'.repeat(199)}`);
    expect(result.detail).not.toContain('y'.repeat(200));
  });

  it('§9 results have no attempts, method "evidence" and parsed null', () => {
    const result = checkWithEvidence('a', ['a'], contains);
    expect(result).toMatchObject({ attempts: [], method: 'evidence', parsed: null, ambiguous: false, interpretations: [] });
  });

  it('§9 the comparator gets the answer and the caller’s evidence, unmodified', () => {
    const evidence = Object.freeze(['doc one', 'doc two']);
    const compareFn = vi.fn(() => true);
    checkWithEvidence('a', evidence, compareFn);
    expect(compareFn).toHaveBeenCalledWith('a', evidence);
  });
});

describe('§9 arguments', () => {
  it('§9.1 evidenceThreshold: non-numbers (booleans included) are TypeErrors; NaN or outside [0, 1] RangeErrors', () => {
    for (const evidenceThreshold of [true, '0.5', null]) {
      expect(() => loose('a', ['e'], () => true, { evidenceThreshold })).toThrow(TypeError);
    }
    for (const evidenceThreshold of [Number.NaN, 1.5, -1]) {
      expect(() => loose('a', ['e'], () => true, { evidenceThreshold })).toThrow(RangeError);
    }
    expect(() => loose('a', ['e'], () => true, { evidenceThreshold: 2 })).toThrow('Expected `evidenceThreshold` to be from 0 to 1, got 2.');
  });

  it('§2.6 options shape is checked first of all, unknown keys named', () => {
    expect(() => loose('a', ['e'], () => true, { evidence_threshold: 0.5 })).toThrow(
      'Unknown option `evidence_threshold` for checkWithEvidence(); did you mean `evidenceThreshold`?',
    );

    expect(() => loose(42, 'bad', null, [])).toThrow(/`options`/);
    expect(() => loose('a', ['e'], () => true, { evidence_threshold: 0.5 })).toThrow(/did you mean `evidenceThreshold`/);
  });

  it('§9.2 answer must be a string, null or undefined', () => {
    expect(() => loose(42, ['e'], () => true)).toThrow(/`answer`/);
  });

  it('§9.2 compareFn must be a synchronous function [differs: no COMPARE_FAILED for a non-function]', () => {
    expect(() => loose('a', ['e'], 'fn')).toThrow(/`compareFn`/);
    expect(() => loose('a', ['e'], async () => true)).toThrow(/synchronous/);
  });

  it('§9.2 evidence must be an array, null or undefined [differs: no strings]', () => {
    expect(() => loose('a', 'Paris is the capital', () => true)).toThrow(/`evidence`/);
    expect(() => loose('a', { 0: 'e' }, () => true)).toThrow(TypeError);
  });

  it('§9 arguments are checked in order: options, threshold, answer, compareFn, evidence', () => {
    expect(() => loose(1, 'x', 'f', { evidenceThreshold: 2 })).toThrow(RangeError);
    expect(() => loose(1, 'x', 'f')).toThrow(/`answer`/);
    expect(() => loose('a', 'x', 'f')).toThrow(/`compareFn`/);
  });
});
