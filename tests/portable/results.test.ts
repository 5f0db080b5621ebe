// A core test for every runtime: vitest and the built package only (see tests/portable/README.md).
import { describe, expect, it } from 'vitest';
import { acheck, BoothRejected, check, resultFrom } from 'boothjs';
import type { CheckpointOutput } from 'boothjs/machine';
import { envelope, scriptedModel } from 'boothjs/testing';

/** A run that retried for each gate: every kind of field a result has. */
const retried = () =>
  check(scriptedModel(['junk', envelope('Lyon', 0.9), envelope('Paris', 0.4), envelope('Paris', 0.9)]).sync, 'Capital of France?', {
    maxRetries: 3,
    validator: (answer) => answer !== 'Lyon' || [false, 'Lyon is not a capital'],
  });

/** A result as a file or a queue gives it back: its JSON, parsed. */
const throughJson = (value: unknown) => JSON.parse(JSON.stringify(value)) as CheckpointOutput;

describe('results', () => {
  it('a result\'s JSON has every field and the derived values', () => {
    const json = throughJson(retried()) as unknown as Record<string, unknown>;
    expect(json).toMatchObject({ status: 'REPAIRED', answer: 'Paris', confidence: 0.9, nAttempts: 4, ok: true, method: 'confidence' });
    for (const field of ['attempts', 'prompts', 'trace', 'settings', 'usage', 'durationMs', 'interpretations', 'parsed']) {
      expect(Object.keys(json)).toContain(field);
    }
    expect(json['attempts']).toHaveLength(4);
    expect(json['prompts']).toHaveLength(4);
  });

  it('resultFrom() of a result\'s JSON gives back the same result, getters and all', () => {
    const original = retried();
    const restored = resultFrom(throughJson(original));
    expect(JSON.stringify(restored)).toBe(JSON.stringify(original));
    expect(restored.status).toBe('REPAIRED');
    expect(restored.ok).toBe(true);
    expect(restored.method).toBe('confidence');
    expect(restored.nAttempts).toBe(4);
    expect(restored.unwrap()).toBe('Paris');
    expect(restored.attempts[1]?.validationError).toBe('Lyon is not a capital');
  });

  it('round-trips each status acheck() decides', async () => {
    const scripts = [
      [envelope('Paris', 0.9)],
      [envelope('', 0.5, { ambiguous: true, interpretations: ['a', 'b'] })],
      ['x', 'y'],
    ];
    const statuses: string[] = [];
    for (const steps of scripts) {
      const original = await acheck(scriptedModel(steps).async, 'q');
      const restored = resultFrom(throughJson(original));
      expect(JSON.stringify(restored)).toBe(JSON.stringify(original));
      statuses.push(restored.status);
    }
    expect(statuses).toEqual(['VERIFIED', 'AMBIGUOUS', 'UNCERTAIN']);
  });

  it('resultFrom() refuses what is not an output, and a field of the wrong type, naming it', () => {
    expect(() => resultFrom({ status: 'DONE' } as never)).toThrow(TypeError);
    expect(() => resultFrom(undefined as never)).toThrow("Expected `output` to be the checkpoint machine's output");
    const forged = throughJson(retried()) as unknown as { attempts: Array<Record<string, unknown>> };
    forged.attempts[0]!['confidence'] = '<img src=x onerror=alert(1)>';
    expect(() => resultFrom(forged as unknown as CheckpointOutput)).toThrow('attempts[0].confidence');
  });

  it('unwrap() gives the accepted answer; a rejected result throws BoothRejected naming status and method, never the answer', () => {
    expect(check(() => envelope('Paris', 0.9), 'q').unwrap()).toBe('Paris');
    const rejected = check(() => envelope('SECRET-ANSWER', 0.1), 'q', { maxRetries: 0 });
    expect(rejected.unwrapOr('fallback')).toBe('fallback');
    let thrown: unknown;
    try {
      rejected.unwrap();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BoothRejected);
    expect(thrown).toBeInstanceOf(Error);
    const message = (thrown as Error).message;
    expect(message).toContain('UNCERTAIN');
    expect(message).toContain('confidence');
    expect(message).not.toContain('SECRET-ANSWER');
    expect((thrown as BoothRejected).result).toBe(rejected);
  });

  it('attempts are frozen: nothing downstream can rewrite the decision', () => {
    const result = check(() => envelope('Paris', 0.9), 'q');
    const attempt = result.attempts[0]!;
    expect(Object.isFrozen(attempt)).toBe(true);
    expect(() => {
      (attempt as { confidence: number | null }).confidence = 0;
    }).toThrow(TypeError);
    expect(attempt.confidence).toBe(0.9);
  });

  it('the trace is every state the run passed through, with its attempt', () => {
    const result = check(scriptedModel([envelope('Lyon', 0.3), envelope('Paris', 0.9)]).sync, 'q');
    expect(result.trace).toEqual([
      { state: 'calling', attempt: 0 },
      { state: 'parsing', attempt: 0 },
      { state: 'ambiguityGate', attempt: 0 },
      { state: 'confidenceGate', attempt: 0 },
      { state: 'reconsidering', attempt: 0 },
      { state: 'calling', attempt: 1 },
      { state: 'parsing', attempt: 1 },
      { state: 'ambiguityGate', attempt: 1 },
      { state: 'confidenceGate', attempt: 1 },
      { state: 'repaired', attempt: 1 },
    ]);
  });
});
