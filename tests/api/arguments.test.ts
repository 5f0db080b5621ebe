import { describe, expect, it, vi } from 'vitest';
import { acheck, check, type CheckOptions } from '../../src/index.js';
import { envelope } from '../fixtures/helpers.js';

// Arguments that TypeScript would refuse, as a JavaScript caller could pass them.
type Loose = (callFn: unknown, prompt: unknown, options?: unknown) => unknown;
const looseCheck = check as unknown as Loose;
const looseAcheck = acheck as unknown as (callFn: unknown, prompt: unknown, options?: unknown) => Promise<unknown>;

const model = () => envelope('Paris', 0.9);

/** Runs the same arguments through check() and acheck() and returns both errors. */
async function bothErrors(callFn: unknown, prompt: unknown, options?: unknown): Promise<[unknown, unknown]> {
  let syncError: unknown;
  try {
    looseCheck(callFn, prompt, options);
  } catch (error) {
    syncError = error;
  }
  const asyncError = await looseAcheck(callFn, prompt, options).then(
    () => undefined,
    (error: unknown) => error,
  );
  return [syncError, asyncError];
}

describe('§2 arguments are checked before any model call, in order', () => {
  it('§2.1 a non-string prompt is a TypeError naming `prompt` and the value', async () => {
    for (const prompt of [42, null, undefined, ['q'], { q: 1 }]) {
      const [syncError, asyncError] = await bothErrors(model, prompt);
      expect(syncError).toBeInstanceOf(TypeError);
      expect(asyncError).toBeInstanceOf(TypeError);
      expect((syncError as Error).message).toMatch(/`prompt`/);
    }
    expect((await bothErrors(model, 42))[0]).toHaveProperty('message', expect.stringContaining('got 42'));
  });

  it('§2.1 an empty prompt is allowed', () => {
    expect(check(model, '').status).toBe('VERIFIED');
  });

  it('§2.1 prompt is checked before callFn', async () => {
    const [syncError] = await bothErrors(null, 42);
    expect((syncError as Error).message).toMatch(/`prompt`/);
  });

  it('§2.2 a callFn that is not a function is a TypeError', async () => {
    const [syncError, asyncError] = await bothErrors('not a function', 'q');
    expect(syncError).toBeInstanceOf(TypeError);
    expect(asyncError).toBeInstanceOf(TypeError);
    expect((syncError as Error).message).toMatch(/`callFn`.*"not a function"/);
  });

  it('§2.2 check() refuses an async callFn, bound or not, pointing to acheck()', () => {
    const asyncFn = async () => envelope('x', 1);
    const asyncArrow = async () => envelope('x', 1);
    for (const fn of [asyncFn, asyncArrow, asyncFn.bind(null)]) {
      expect(() => looseCheck(fn, 'q')).toThrow(TypeError);
      expect(() => looseCheck(fn, 'q')).toThrow(/synchronous.*async.*acheck\(\)/);
    }
  });

  it('§2.3 threshold: non-numbers (booleans included) are TypeErrors [differs]', async () => {
    for (const threshold of [true, false, '0.5', null, [0.5]]) {
      const [syncError, asyncError] = await bothErrors(model, 'q', { threshold });
      expect(syncError).toBeInstanceOf(TypeError);
      expect(asyncError).toBeInstanceOf(TypeError);
      expect((syncError as Error).message).toMatch(/`threshold`/);
    }
  });

  it('§2.3 threshold: NaN or outside [0, 1] is a RangeError naming the value', async () => {
    for (const threshold of [Number.NaN, -0.01, 1.01, Number.POSITIVE_INFINITY]) {
      const [syncError, asyncError] = await bothErrors(model, 'q', { threshold });
      expect(syncError).toBeInstanceOf(RangeError);
      expect(asyncError).toBeInstanceOf(RangeError);
      expect((syncError as Error).message).toContain(String(threshold));
    }
    expect(check(model, 'q', { threshold: 0 }).status).toBe('VERIFIED');
    expect(check(model, 'q', { threshold: 1 }).status).toBe('UNCERTAIN');
  });

  it('§2.4 maxRetries: non-integers (booleans, 1.5, Infinity included) are TypeErrors [differs]', async () => {
    for (const maxRetries of [true, 1.5, Number.POSITIVE_INFINITY, Number.NaN, '1']) {
      const [syncError, asyncError] = await bothErrors(model, 'q', { maxRetries });
      expect(syncError).toBeInstanceOf(TypeError);
      expect(asyncError).toBeInstanceOf(TypeError);
      expect((syncError as Error).message).toMatch(/`maxRetries`/);
    }
  });

  it('§2.4 maxRetries: negative is a RangeError', async () => {
    const [syncError, asyncError] = await bothErrors(model, 'q', { maxRetries: -1 });
    expect(syncError).toBeInstanceOf(RangeError);
    expect(asyncError).toBeInstanceOf(RangeError);
    expect((syncError as Error).message).toMatch(/`maxRetries`.*-1/);
  });

  it('§2.5 onAttempt and validator: anything but a function, null or undefined is a TypeError [differs]', async () => {
    for (const key of ['onAttempt', 'validator']) {
      for (const value of ['fn', 1, {}, true]) {
        const [syncError, asyncError] = await bothErrors(model, 'q', { [key]: value });
        expect(syncError).toBeInstanceOf(TypeError);
        expect(asyncError).toBeInstanceOf(TypeError);
        expect((syncError as Error).message).toContain(`\`${key}\``);
      }
      expect(check(model, 'q', { [key]: null }).status).toBe('VERIFIED');
    }
  });

  it('§2.5 check() refuses an async onAttempt; acheck() accepts it', async () => {
    const onAttempt = async () => {};
    expect(() => check(model, 'q', { onAttempt: onAttempt as unknown as CheckOptions['onAttempt'] })).toThrow(
      /synchronous.*async.*acheck\(\)/,
    );
    await expect(acheck(model, 'q', { onAttempt })).resolves.toHaveProperty('status', 'VERIFIED');
  });

  it('§6 an async validator is refused up front by both entry points, before any call', async () => {
    const callFn = vi.fn(model);
    const validator = async () => true;
    const [syncError, asyncError] = await bothErrors(callFn, 'q', { validator });
    expect(syncError).toBeInstanceOf(TypeError);
    expect(asyncError).toBeInstanceOf(TypeError);
    expect((syncError as Error).message).toMatch(/`validator`/);
    expect(callFn).not.toHaveBeenCalled();
  });

  it('§2.6 options may be omitted, undefined or null', () => {
    expect(check(model, 'q').status).toBe('VERIFIED');
    expect(check(model, 'q', undefined).status).toBe('VERIFIED');
    expect(check(model, 'q', null).status).toBe('VERIFIED');
  });

  it('§2.6 options that are not a plain object are a TypeError', async () => {
    for (const options of [[], () => {}, 'threshold', 0.5, new Date()]) {
      const [syncError, asyncError] = await bothErrors(model, 'q', options);
      expect(syncError).toBeInstanceOf(TypeError);
      expect(asyncError).toBeInstanceOf(TypeError);
      expect((syncError as Error).message).toMatch(/`options`/);
    }
    expect(check(model, 'q', Object.create(null)).status).toBe('VERIFIED');
  });

  it('§2.6 a known key set to undefined counts as absent', () => {
    const result = check(model, 'q', { threshold: undefined, maxRetries: undefined, validator: undefined });
    expect(result.status).toBe('VERIFIED');
  });

  it('§2.6 an unknown key is an error whatever its value, with the camelCase spelling suggested', async () => {
    const [syncError, asyncError] = await bothErrors(model, 'q', { max_retries: undefined });
    expect(syncError).toBeInstanceOf(TypeError);
    expect(asyncError).toBeInstanceOf(TypeError);
    expect((syncError as Error).message).toMatch(/`max_retries`.*did you mean `maxRetries`\?/);
    expect(() => looseCheck(model, 'q', { on_attempt: null })).toThrow(/did you mean `onAttempt`/);
    expect(() => looseCheck(model, 'q', { temperature: 0 })).toThrow(/Unknown option `temperature`/);
  });

  it('a misspelt option gets the nearest name by edit distance, an unrelated one the list', () => {
    expect(() => looseCheck(model, 'q', { thresh: 0.5 })).toThrow(/Unknown option `thresh` for check\(\); did you mean `threshold`\?/);
    expect(() => looseCheck(model, 'q', { maxRetry: 2 })).toThrow(/did you mean `maxRetries`\?/);
    expect(() => looseCheck(model, 'q', { validater: null })).toThrow(/did you mean `validator`\?/);
    expect(() => looseCheck(model, 'q', { temperature: 0 })).toThrow(
      /Unknown option `temperature` for check\(\); the options are `threshold`, `maxRetries`, `onAttempt`, `schema`, `validator`, `samples`, `agree`, `confidenceFrom`, `inspect`, `telemetry`, `system`, `messages`, `instructions`, `parseFn`, `modelName`, `escalate`, `budget`\./,
    );
  });

  it('check("q", fn) says the arguments look swapped', async () => {
    const [syncError, asyncError] = await bothErrors('q', model);
    for (const error of [syncError, asyncError]) {
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(/takes \(callFn, prompt, options\).*the arguments look swapped/);
    }
  });

  it('only a string callFn with a function prompt looks swapped; any other bad pair names `prompt` first', async () => {
    const [syncError, asyncError] = await bothErrors(42, model);
    for (const error of [syncError, asyncError]) {
      expect((error as Error).message).toBe('Expected `prompt` to be a string, got a function.');
    }
  });

  it('the callFn error says what each entry point wants it to return', async () => {
    const [syncError, asyncError] = await bothErrors(42, 'q');
    expect((syncError as Error).message).toBe('Expected `callFn` to be a function (prompt, info) => string, got 42.');
    expect((asyncError as Error).message).toBe(
      'Expected `callFn` to be a function (prompt, info) => string or Promise<string>, got 42.',
    );
  });

  it('maxRetries is capped at 100 with a RangeError that says why', async () => {
    const [syncError, asyncError] = await bothErrors(model, 'q', { maxRetries: 1e9 });
    expect(syncError).toBeInstanceOf(RangeError);
    expect(asyncError).toBeInstanceOf(RangeError);
    expect((syncError as Error).message).toBe(
      'Expected `maxRetries` to be at most 100, got 1000000000; each retry is a model call, so a handful is usually right.',
    );
    expect(check(model, 'q', { maxRetries: 100 }).status).toBe('VERIFIED');
  });

  it('§2.6 `signal` is unknown to check() and known to acheck()', async () => {
    expect(() => looseCheck(model, 'q', { signal: new AbortController().signal })).toThrow(TypeError);
    expect(() => looseCheck(model, 'q', { signal: undefined })).toThrow(/acheck\(\)/);
    await expect(acheck(model, 'q', { signal: new AbortController().signal })).resolves.toHaveProperty('ok', true);
  });

  it('§2.6 the shape of options is checked right after callFn, before any option value', async () => {
    const [syncError] = await bothErrors(model, 'q', { threshold: 5, bogus: 1 });
    expect(syncError).toBeInstanceOf(TypeError);
    expect((syncError as Error).message).toMatch(/bogus/);
    const [notAFunction] = await bothErrors(null, 'q', []);
    expect((notAFunction as Error).message).toMatch(/`callFn`/);
  });

  it('§2 option values are checked in order: threshold, maxRetries, onAttempt, schema, validator, signal', async () => {
    const all = { threshold: 2, maxRetries: -1, onAttempt: 1, schema: 1, validator: 1, signal: 1 };
    const messages: string[] = [];
    for (const key of Object.keys(all)) {
      const options = Object.fromEntries(Object.entries(all).filter(([k]) => Object.keys(all).indexOf(k) >= Object.keys(all).indexOf(key)));
      const [, asyncError] = await bothErrors(model, 'q', options);
      messages.push((asyncError as Error).message);
    }
    expect(messages.map((m) => /`(\w+)`/.exec(m)?.[1])).toEqual(['threshold', 'maxRetries', 'onAttempt', 'schema', 'validator', 'signal']);
  });

  it('[differs] check() tests the async callFn before the threshold', () => {
    expect(() => looseCheck(async () => '', 'q', { threshold: 7 })).toThrow(/acheck/);
  });

  it('§2.7 acheck(): a signal that is not an AbortSignal is a TypeError', async () => {
    for (const signal of [{ aborted: false }, 'signal', 1]) {
      await expect(looseAcheck(model, 'q', { signal })).rejects.toThrow(/`signal`/);
    }
    await expect(acheck(model, 'q', { signal: null })).resolves.toHaveProperty('ok', true);
  });

  it('§2.7 argument errors come before an already-aborted signal', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(looseAcheck(model, 'q', { signal: controller.signal, threshold: 3 })).rejects.toBeInstanceOf(RangeError);
    await expect(acheck(model, 'q', { signal: controller.signal })).rejects.toThrow('stop');
  });

  it('§2 acheck() reports argument errors as a rejected promise, never a synchronous throw', () => {
    let promise: Promise<unknown> | undefined;
    expect(() => {
      promise = looseAcheck(42, 42);
    }).not.toThrow();
    return expect(promise).rejects.toBeInstanceOf(TypeError);
  });

  it('§2 no model call is made when an argument is bad', async () => {
    const callFn = vi.fn(model);
    await bothErrors(callFn, 'q', { maxRetries: 1.5 });
    expect(callFn).not.toHaveBeenCalled();
  });

  it('§2 nothing the caller passed is mutated', () => {
    const options = Object.freeze({ threshold: 0.5, maxRetries: 2, onAttempt: () => {}, validator: () => true });
    const before = { ...options };
    expect(() => check(model, 'q', options)).not.toThrow();
    expect(options).toEqual(before);
  });

  it('§2 each option is read exactly once', () => {
    let reads = 0;
    const options = {
      get threshold() {
        reads += 1;
        return 0.5;
      },
    };
    check(model, 'q', options);
    expect(reads).toBe(1);
  });

  it('§2 an option is what the caller gave, never something an app put on Object.prototype', async () => {
    const lowConfidence = () => envelope('Paris', 0.2);
    const prototype = Object.prototype as Record<string, unknown>;
    prototype['maxRetries'] = 4;
    prototype['threshold'] = 0.1;
    try {
      for (const options of [undefined, null, {}, { threshold: 0.7 }]) {
        // The defaults: threshold 0.7, one retry.
        expect(check(lowConfidence, 'q', options)).toMatchObject({ status: 'UNCERTAIN', nAttempts: 2 });
        expect(await acheck(lowConfidence, 'q', options)).toMatchObject({ status: 'UNCERTAIN', nAttempts: 2 });
      }
    } finally {
      delete prototype['maxRetries'];
      delete prototype['threshold'];
    }
  });
});
