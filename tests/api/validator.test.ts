import { describe, expect, it, vi } from 'vitest';
import { acheck, check, type Validator } from '../../src/index.js';
import { verdictFromReturn, verdictFromThrow } from '../../src/decide/validation.js';
import { envelope, scripted } from '../fixtures/helpers.js';

/** Runs one confident answer past a validator (no retries) and returns the attempt. */
function judged(validator: unknown) {
  const result = check(() => envelope('Paris', 0.95), 'q', { maxRetries: 0, validator: validator as Validator });
  const [attempt] = result.attempts;
  if (!attempt) throw new Error('no attempt');
  return { result, attempt };
}

describe('§6 validator', () => {
  it('§6 runs with the answer string, only on parsed, unambiguous attempts', () => {
    const validator = vi.fn(() => true);
    const model = scripted([
      { throws: new Error('down') },
      'not json',
      envelope('', 0.9, { ambiguous: true, interpretations: ['a', 'b'] }),
    ]);
    check(model.sync, 'q', { maxRetries: 2, validator });
    expect(validator).not.toHaveBeenCalled();
    check(() => envelope(42, 0.9), 'q', { validator });
    expect(validator).toHaveBeenCalledWith('42');
  });

  it('§6 true passes and leaves validationError null', () => {
    const { result, attempt } = judged(() => true);
    expect(result.status).toBe('VERIFIED');
    expect(attempt).toMatchObject({ passedValidation: true, validationError: null });
  });

  it('§6 a pass leaves validationError null even with a message [differs]', () => {
    expect(judged(() => [true, 'looks fine']).attempt.validationError).toBeNull();
  });

  it('§6 false fails with a generic message containing "false"', () => {
    const { result, attempt } = judged(() => false);
    expect(result.status).toBe('UNCERTAIN');
    expect(attempt.passedValidation).toBe(false);
    expect(attempt.validationError).toMatch(/false/);
  });

  it('§6 [false] and [false, null] / [false, undefined] use the generic message', () => {
    for (const verdict of [[false], [false, null], [false, undefined]]) {
      expect(judged(() => verdict).attempt.validationError).toMatch(/false/);
    }
  });

  it('§6 [false, message] keeps the message verbatim, even empty', () => {
    expect(judged(() => [false, '  Must be a city in Italy. ']).attempt.validationError).toBe('  Must be a city in Italy. ');
    expect(judged(() => [false, '']).attempt.validationError).toBe('');
  });

  it('§6 a throw fails with "Validator threw <name>: <message>" and never escapes', () => {
    const { attempt } = judged(() => {
      throw new SyntaxError('bad regex');
    });
    expect(attempt.validationError).toBe('Validator threw SyntaxError: bad regex');
    expect(judged(() => {
      throw 'plain string';
    }).attempt.validationError).toBe('Validator threw Error: plain string');
  });

  it('§6 a returned Promise fails saying validators must be synchronous, its rejection handled', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const { attempt } = judged(() => Promise.reject(new Error('async')));
      expect(attempt.validationError).toMatch(/synchronous/);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });

  it('§6 any other return fails as invalid', () => {
    for (const returned of [undefined, null, 1, 'yes', [], [false, 'a', 'b'], ['false'], [false, 7], {}]) {
      expect(judged(() => returned).attempt.validationError).toMatch(/invalid/);
    }
  });

  it('§7.2 a failed validation is retried however confident, then repaired', async () => {
    const validator = (answer: string) => answer === 'Paris' || ([false, 'not the capital'] as const);
    for (const run of [
      () => check(scripted([envelope('Lyon', 1), envelope('Paris', 0.9)]).sync, 'q', { validator }),
      () => acheck(scripted([envelope('Lyon', 1), envelope('Paris', 0.9)]).async, 'q', { validator }),
    ]) {
      const result = await run();
      expect(result.status).toBe('REPAIRED');
      expect(result.attempts.map((a) => a.passedValidation)).toEqual([false, true]);
    }
  });

  it('§8 method is "validation" when the last attempt failed validation', () => {
    expect(judged(() => false).result.method).toBe('validation');
  });
});

describe('§6 verdict functions', () => {
  it('verdictFromReturn and verdictFromThrow are pure', () => {
    expect(verdictFromReturn(true)).toEqual({ passed: true, error: null });
    expect(verdictFromReturn([false, 'x'])).toEqual({ passed: false, error: 'x' });
    expect(verdictFromThrow(new TypeError('t'))).toEqual({ passed: false, error: 'Validator threw TypeError: t' });
  });
});
