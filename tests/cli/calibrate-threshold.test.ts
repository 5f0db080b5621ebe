import { describe, expect, it } from 'vitest';
import { calibrate, type Labelled } from '../../src/cli/calibrate.js';

/**
 * The fitted threshold is the lowest reported confidence whose accepted answers reach the
 * target precision. `calibrate` finds it in one sweep; this is the definition read literally
 * (each candidate filters every result), and the two must agree on every input.
 */
function definition(results: readonly Labelled[], target: number) {
  const candidates = [...new Set(results.map((r) => r.confidence))].sort((a, b) => a - b);
  for (const value of candidates) {
    const accepted = results.filter((r) => r.confidence >= value);
    const precision = accepted.filter((r) => r.correct).length / accepted.length;
    if (precision >= target) return { value, precision, coverage: accepted.length / results.length };
  }
  return null;
}

/** A small seeded generator (mulberry32), so a failure names the case that made it. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('the fitted threshold', () => {
  it('is the definition’s on 2 000 random result sets: ties, few distinct values, none that reaches the target', () => {
    for (let seed = 1; seed <= 2_000; seed += 1) {
      const next = random(seed);
      const size = 1 + Math.floor(next() * 60);
      // Few distinct confidences (ties) in some sets, nearly all distinct in others.
      const levels = seed % 3 === 0 ? 4 : 1_000;
      const skill = next();
      const results: Labelled[] = Array.from({ length: size }, () => {
        const confidence = Math.round(next() * levels) / levels;
        return { status: 'VERIFIED', confidence, correct: next() < skill * confidence + (1 - skill) * 0.5 };
      });
      const target = [0.5, 0.8, 0.95, 1][seed % 4]!;
      expect(calibrate(results, target).threshold, `seed ${seed}`).toEqual(definition(results, target));
    }
  });

  it('the lowest of equal precisions wins, and a set whose best precision is under the target has none', () => {
    const results: Labelled[] = [
      { status: 'VERIFIED', confidence: 0.9, correct: true },
      { status: 'VERIFIED', confidence: 0.9, correct: true },
      { status: 'VERIFIED', confidence: 0.6, correct: true },
      { status: 'UNCERTAIN', confidence: 0.3, correct: false },
    ];
    expect(calibrate(results, 1).threshold).toEqual({ value: 0.6, precision: 1, coverage: 0.75 });
    expect(calibrate(results, 0.7).threshold).toEqual({ value: 0.3, precision: 0.75, coverage: 1 });
    expect(calibrate(results.slice(3), 0.5).threshold).toBeNull();
  });
});
