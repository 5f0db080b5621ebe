// A core test for every runtime: vitest and the built package only (see tests/portable/README.md).
import { describe, expect, it } from 'vitest';
import {
  acheck,
  AMBIGUOUS,
  BLOCKED,
  check,
  type CheckOptions,
  CONFIDENCE_RETRY_MARKER,
  PARSE_RETRY_MARKER,
  REPAIRED,
  UNCERTAIN,
  VALIDATION_RETRY_MARKER,
  VERIFIED,
} from 'boothjs';
import { envelope, type ScriptStep, scriptedModel } from 'boothjs/testing';

/** The decision of one script, by check() and by acheck(), which must agree. */
async function decide(steps: readonly ScriptStep[], options: CheckOptions = {}) {
  const sync = check(scriptedModel(steps).sync, 'Capital of France?', options);
  const async = await acheck(scriptedModel(steps).async, 'Capital of France?', options);
  expect(async.status).toBe(sync.status);
  expect(async.answer).toBe(sync.answer);
  expect(async.nAttempts).toBe(sync.nAttempts);
  return sync;
}

const ambiguousReply = envelope('Paris, France', 0.8, {
  ambiguous: true,
  interpretations: ['Paris, France', 'Paris, Texas'],
  chosen_interpretation: 'Paris, France',
});

describe('decisions', () => {
  it('a confident first answer is VERIFIED after one call', async () => {
    const result = await decide([envelope('Paris', 0.9)]);
    expect(result.status).toBe(VERIFIED);
    expect(result.answer).toBe('Paris');
    expect(result.confidence).toBe(0.9);
    expect(result.ok).toBe(true);
    expect(result.nAttempts).toBe(1);
    expect(result.method).toBe('confidence');
  });

  it('the threshold itself is enough; the default threshold is 0.7', async () => {
    expect((await decide([envelope('Paris', 0.7)])).status).toBe(VERIFIED);
    expect((await decide([envelope('Paris', 0.5)], { threshold: 0.5 })).status).toBe(VERIFIED);
    expect((await decide([envelope('Paris', 0.69), envelope('Paris', 0.69)])).status).toBe(UNCERTAIN);
  });

  it('low confidence is retried with the answer to reconsider, and a confident retry is REPAIRED', async () => {
    const model = scriptedModel([envelope('Lyon', 0.3), envelope('Paris', 0.9)]);
    const result = check(model.sync, 'Capital of France?');
    expect(result.status).toBe(REPAIRED);
    expect(result.answer).toBe('Paris');
    expect(result.attempts.map((attempt) => attempt.answer)).toEqual(['Lyon', 'Paris']);
    expect(model.prompts).toHaveLength(2);
    expect(model.prompts[0]).not.toContain(CONFIDENCE_RETRY_MARKER);
    expect(model.prompts[1]).toContain(CONFIDENCE_RETRY_MARKER);
    expect(model.prompts[1]).toContain('"Lyon"');
    expect(model.prompts[1]).toContain('Capital of France?');
  });

  it('a failed validation is retried however confident, with the validator\'s message', async () => {
    const model = scriptedModel([envelope('November 1989', 1), envelope('1989', 0.9)]);
    const result = check(model.sync, 'When did the Berlin Wall fall?', {
      validator: (answer) => /^\d{4}$/.test(answer) || [false, 'answer with the year only'],
    });
    expect(result.status).toBe(REPAIRED);
    expect(result.answer).toBe('1989');
    expect(result.attempts[0]?.passedValidation).toBe(false);
    expect(result.attempts[0]?.validationError).toBe('answer with the year only');
    expect(model.prompts[1]).toContain(VALIDATION_RETRY_MARKER);
    expect(model.prompts[1]).toContain('answer with the year only');
  });

  it('an answer the validator never passes is UNCERTAIN by validation', () => {
    const result = check(() => envelope('Lyon', 0.95), 'Capital of France?', { validator: () => false, maxRetries: 1 });
    expect(result.status).toBe(UNCERTAIN);
    expect(result.method).toBe('validation');
    expect(result.attempts.map((attempt) => attempt.validationError)).toEqual(['the validator returned false', 'the validator returned false']);
  });

  it('an ambiguous question is AMBIGUOUS at once, never retried, and never validated', async () => {
    let validated = 0;
    const result = await decide([ambiguousReply], {
      maxRetries: 3,
      validator: () => {
        validated += 1;
        return false;
      },
    });
    expect(result.status).toBe(AMBIGUOUS);
    expect(result.nAttempts).toBe(1);
    expect(result.ambiguous).toBe(true);
    expect(result.interpretations).toEqual(['Paris, France', 'Paris, Texas']);
    expect(result.attempts[0]?.chosenInterpretation).toBe('Paris, France');
    expect(result.method).toBe('ambiguity');
    expect(result.ok).toBe(false);
    expect(validated).toBe(0);
  });

  it('UNCERTAIN once the retries are spent, with the last answer that parsed', async () => {
    const result = await decide([envelope('a', 0.1), envelope('b', 0.2), envelope('c', 0.3)], { maxRetries: 2 });
    expect(result.status).toBe(UNCERTAIN);
    expect(result.nAttempts).toBe(3);
    expect(result.answer).toBe('c');
    expect(result.confidence).toBe(0.3);
    expect(result.ok).toBe(false);
  });

  it('maxRetries bounds the calls at maxRetries + 1', () => {
    for (const maxRetries of [0, 1, 4]) {
      const model = scriptedModel(Array.from({ length: 10 }, () => 'no JSON here'));
      const result = check(model.sync, 'q', { maxRetries });
      expect(model.prompts).toHaveLength(maxRetries + 1);
      expect(result.status).toBe(UNCERTAIN);
      expect(result.allParseFailed).toBe(true);
    }
  });

  it('a failed call is recorded, never thrown, and the first prompt is sent again unchanged', async () => {
    const model = scriptedModel([{ throws: new Error('connection reset') }, envelope('Paris', 0.9)]);
    const result = check(model.sync, 'Capital of France?');
    expect(result.status).toBe(REPAIRED);
    expect(result.attempts[0]?.callFailed).toBe(true);
    expect(result.attempts[0]?.rawText).toBe('Error: connection reset');
    expect(model.prompts[1]).toBe(model.prompts[0]);
  });

  it('a call that fails on every attempt is UNCERTAIN by call_failure', async () => {
    const result = await decide([{ throws: new Error('down') }, { returns: 42 }]);
    expect(result.status).toBe(UNCERTAIN);
    expect(result.callFailed).toBe(true);
    expect(result.method).toBe('call_failure');
    expect(result.answer).toBeNull();
  });

  it('each kind of retry has its own prompt: parse, validation, confidence', () => {
    const model = scriptedModel(['junk', envelope('Lyon', 0.9), envelope('Paris', 0.4), envelope('Paris', 0.9)]);
    const result = check(model.sync, 'Capital of France?', {
      maxRetries: 3,
      validator: (answer) => answer !== 'Lyon' || [false, 'Lyon is not a capital'],
    });
    expect(result.status).toBe(REPAIRED);
    expect(result.nAttempts).toBe(4);
    expect(model.prompts[1]).toContain(PARSE_RETRY_MARKER);
    expect(model.prompts[2]).toContain(VALIDATION_RETRY_MARKER);
    expect(model.prompts[3]).toContain(CONFIDENCE_RETRY_MARKER);
    expect(result.trace.map((step) => step.state)).toContain('reconsidering');
  });

  it('check() and acheck() never decide BLOCKED: it belongs to checkWithEvidence()', async () => {
    const statuses: string[] = [];
    for (const steps of [[envelope('a', 0.9)], ['x', 'y'], [ambiguousReply], [envelope('a', 0.1), envelope('a', 0.9)]]) {
      statuses.push((await decide(steps)).status);
    }
    expect(statuses).toEqual([VERIFIED, UNCERTAIN, AMBIGUOUS, REPAIRED]);
    expect(statuses).not.toContain(BLOCKED);
  });
});
