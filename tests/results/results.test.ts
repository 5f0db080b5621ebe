import { describe, expect, it } from 'vitest';
import { acheck, BoothRejected, check, checkWithEvidence } from '../../src/index.js';
import { envelope, scripted } from '../fixtures/helpers.js';

const run = (steps: Parameters<typeof scripted>[0], maxRetries = steps.length - 1) =>
  check(scripted(steps).sync, 'q', { maxRetries });

describe('§8 results', () => {
  it('§8 accepted: the winning attempt’s answer, confidence and parsed; not ambiguous, no interpretations', () => {
    const result = run([envelope('Lyon', 0.2, { interpretations: ['x'] }), envelope('Paris', 0.9, { interpretations: ['y'] })]);
    expect(result).toMatchObject({ status: 'REPAIRED', answer: 'Paris', confidence: 0.9, ambiguous: false, interpretations: [] });
    expect(result.parsed).toBe(result.attempts[1]?.parsed);
  });

  it('§8 ambiguous: its answer (may be blank), confidence, parsed and interpretations', () => {
    const result = run([envelope('', 0.4, { ambiguous: true, interpretations: ['a', 'b'] })]);
    expect(result).toMatchObject({ status: 'AMBIGUOUS', answer: '', confidence: 0.4, ambiguous: true, interpretations: ['a', 'b'] });
    expect(result.parsed).toBe(result.attempts[0]?.parsed);
  });

  it('§8 uncertain: the last attempt that parsed, or nulls when none did', () => {
    const some = run([envelope('a', 0.3), envelope('b', 0.4), 'garbage']);
    expect(some).toMatchObject({ status: 'UNCERTAIN', answer: 'b', confidence: 0.4, ambiguous: false, interpretations: [] });
    expect(some.parsed).toBe(some.attempts[1]?.parsed);
    const none = run(['x', { throws: new Error('y') }]);
    expect(none).toMatchObject({ answer: null, confidence: null, parsed: null });
  });

  it('§8 check results always have evidenceAgreement, reason and detail null', () => {
    const result = run(['x', 'y']);
    expect([result.evidenceAgreement, result.reason, result.detail]).toEqual([null, null, null]);
  });

  it('§8 attempts carry every documented field', () => {
    const [attempt] = run([envelope('Paris', 0.9)]).attempts;
    expect(Object.keys(attempt ?? {})).toEqual([
      'rawText',
      'answer',
      'confidence',
      'parseOk',
      'error',
      'callFailed',
      'ambiguous',
      'interpretations',
      'chosenInterpretation',
      'passedValidation',
      'validationError',
      'schemaIssues',
      'parsed',
      'callTries',
      'durationMs',
      'usage',
    ]);
  });

  it('§8 nAttempts, ok, allParseFailed and callFailed are derived getters', () => {
    const failedCalls = run([{ throws: new Error('a') }, { returns: 1 }]);
    expect(failedCalls).toMatchObject({ nAttempts: 2, ok: false, allParseFailed: true, callFailed: true });
    const mixed = run([{ throws: new Error('a') }, 'junk']);
    expect(mixed).toMatchObject({ allParseFailed: true, callFailed: false });
    const good = run([envelope('a', 0.9)]);
    expect(good).toMatchObject({ nAttempts: 1, ok: true, allParseFailed: false, callFailed: false, checkerFailed: false });
    const proto = Object.getPrototypeOf(good) as object;
    for (const name of ['nAttempts', 'ok', 'allParseFailed', 'callFailed', 'checkerFailed', 'method']) {
      expect(typeof Object.getOwnPropertyDescriptor(proto, name)?.get, name).toBe('function');
    }
  });

  it('§8 method: ambiguity, evidence, call_failure, parse_failure, validation, confidence', () => {
    expect(run([envelope('', 0.5, { ambiguous: true })]).method).toBe('ambiguity');
    expect(checkWithEvidence('a', ['a'], () => true).method).toBe('evidence');
    expect(run([{ throws: new Error('ECONNREFUSED') }, { throws: new Error('ECONNREFUSED') }]).method).toBe('call_failure');
    expect(run(['x', 'y']).method).toBe('parse_failure');
    // One reply came, and it was bad: the reader's verdict, not an outage.
    expect(run([{ throws: new Error('ECONNREFUSED') }, 'y']).method).toBe('parse_failure');
    expect(check(() => envelope('a', 0.9), 'q', { validator: () => false, maxRetries: 0 }).method).toBe('validation');
    expect(run([envelope('a', 0.1), envelope('a', 0.9)]).method).toBe('confidence');
    expect(run(['x', envelope('a', 0.1)]).method).toBe('confidence');
  });

  it('§8 checkerFailed is true for COMPARE_FAILED and INVALID_SCORE only', () => {
    const thrown = checkWithEvidence('a', ['e'], () => {
      throw new Error('x');
    });
    expect(thrown.checkerFailed).toBe(true);
    expect(checkWithEvidence('a', ['e'], () => 7).checkerFailed).toBe(true);
    expect(checkWithEvidence('a', ['e'], () => false).checkerFailed).toBe(false);
  });

  it('§8 unwrap() returns the answer when ok', () => {
    expect(run([envelope('Paris', 0.9)]).unwrap()).toBe('Paris');
  });

  it('§8 unwrap() throws BoothRejected naming status and method, never the answer', () => {
    const result = run([envelope('SECRET-ANSWER', 0.1)], 0);
    let thrown: unknown;
    try {
      result.unwrap();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BoothRejected);
    expect(thrown).toBeInstanceOf(Error);
    const rejected = thrown as BoothRejected;
    expect(rejected.name).toBe('BoothRejected');
    expect(rejected.result).toBe(result);
    expect(rejected.message).toContain('UNCERTAIN');
    expect(rejected.message).toContain('confidence');
    expect(rejected.message).not.toContain('SECRET-ANSWER');
  });

  it('§8 when every call failed, the BoothRejected message says so: an outage, not a bad reply (boothpy says parse_failure)', () => {
    const unwrapped = (steps: Parameters<typeof run>[0]) => {
      try {
        run(steps, 1).unwrap();
      } catch (error) {
        return (error as Error).message;
      }
      return null;
    };
    expect(unwrapped([{ throws: new Error('ECONNREFUSED') }, { throws: new Error('ECONNREFUSED') }])).toBe(
      'Booth did not accept the answer: status UNCERTAIN, method call_failure (every model call failed)',
    );
    expect(unwrapped([{ throws: new Error('ECONNREFUSED') }, 'junk'])).toBe('Booth did not accept the answer: status UNCERTAIN, method parse_failure');
  });

  it('§8 unwrapOr(fallback) returns the answer when ok, else the fallback', () => {
    expect(run([envelope('Paris', 0.9)]).unwrapOr('n/a')).toBe('Paris');
    expect(run(['junk'], 0).unwrapOr(null)).toBeNull();
  });

  it('§8 toJSON() is a plain object with every field and derived value, so JSON.stringify is complete', () => {
    const result = run(['junk', envelope('Paris', 0.9)]);
    const json = JSON.parse(JSON.stringify(result)) as Record<string, unknown>;
    expect(Object.keys(json).sort()).toEqual(
      [
        'status',
        'answer',
        'confidence',
        'agreement',
        'attempts',
        'ambiguous',
        'interpretations',
        'evidenceAgreement',
        'parsed',
        'reason',
        'detail',
        'prompts',
        'trace',
        'settings',
        'usage',
        'durationMs',
        'clarifications',
        'escalations',
        'nAttempts',
        'ok',
        'allParseFailed',
        'callFailed',
        'checkerFailed',
        'method',
        'model',
        'models',
      ].sort(),
    );
    expect(json['attempts']).toHaveLength(2);
    expect(json).toMatchObject({ ok: true, method: 'confidence', nAttempts: 2, status: 'REPAIRED' });
    expect(Object.getPrototypeOf(result.toJSON())).toBe(Object.prototype);
  });

  it('records the prompt sent for each attempt, with its kind', () => {
    const model = scripted([{ throws: new Error('x') }, 'junk', envelope('a', 0.2), envelope('a', 0.9)]);
    const result = check(model.sync, 'q', { maxRetries: 3 });
    expect(result.prompts.map((p) => p.kind)).toEqual(['first', 'repeat', 'parse', 'confidence']);
    expect(result.prompts.map((p) => p.text)).toEqual(model.prompts);
    expect(result.prompts.every((p) => Object.isFrozen(p))).toBe(true);
    expect(check(() => envelope('a', 0.9), 'q', { validator: () => false, maxRetries: 1 }).prompts[1]?.kind).toBe('validation');
  });

  it('§7 results are frozen, their attempts too', () => {
    const result = run(['junk', envelope('Paris', 0.9)]);
    expect(Object.isFrozen(result)).toBe(true);
    expect(Object.isFrozen(result.attempts)).toBe(true);
    expect(Object.isFrozen(result.trace)).toBe(true);
    expect(result.attempts.every((a) => Object.isFrozen(a))).toBe(true);
  });

  it('each attempt records how long it took, from its first call to its verdict', async () => {
    const slowFirst = async (_prompt: string, { attempt }: { attempt: number }) => {
      await new Promise((resolve) => setTimeout(resolve, attempt === 0 ? 60 : 0));
      return attempt === 0 ? envelope('Lyon', 0.2) : envelope('Paris', 0.9);
    };
    const result = await acheck(slowFirst, 'q');
    expect(result.attempts[0]?.durationMs).toBeGreaterThanOrEqual(55);
    expect(result.attempts[1]?.durationMs).toBeLessThan(result.attempts[0]?.durationMs ?? 0);
    expect(run([envelope('Paris', 0.9)]).attempts[0]?.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('a check result says what the run was asked to do; an evidence result has no such settings', async () => {
    const result = await acheck(async () => envelope('Paris', 0.9), 'q', {
      threshold: 0.8,
      maxRetries: 2,
      validator: () => true,
      timeoutMs: 5_000,
      callRetries: { retries: 1 },
    });
    expect(result.settings).toEqual({
      threshold: 0.8,
      maxRetries: 2,
      validator: true,
      schema: false,
      timeoutMs: 5_000,
      deadlineMs: null,
      callRetries: { retries: 1 },
      samples: 1,
      confidenceFrom: 'self',
    });
    expect(run([envelope('Paris', 0.9)]).settings).toMatchObject({ threshold: 0.7, maxRetries: 0, validator: false });
    expect(checkWithEvidence('Paris', ['Paris'], () => true).settings).toBeNull();
  });
});
