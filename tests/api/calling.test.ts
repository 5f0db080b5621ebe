import { describe, expect, it, vi } from 'vitest';
import { acheck, check } from '../../src/index.js';
import { replySchemaOf } from '../../src/decide/schema.js';
import { envelope, scripted } from '../fixtures/helpers.js';

describe('§1 callFn receives the prompt and { attempt }', () => {
  it('attempt is 0-based; check() passes no signal', () => {
    const infos: unknown[] = [];
    check(
      (_prompt, info) => {
        infos.push(info);
        return infos.length === 1 ? 'nope' : envelope('Paris', 0.9);
      },
      'q',
    );
    // replySchema: the reply's JSON Schema, for a provider's structured output (see adapters).
    // question and messages: the caller's question, and the whole chat (see conversations).
    // reportUsage: tells Booth what the call consumed (see usage).
    const replySchema = replySchemaOf(null);
    const reportUsage = expect.any(Function) as unknown;
    const messages = expect.any(Array) as unknown;
    expect(infos).toEqual([
      { attempt: 0, replySchema, question: 'q', messages, reportUsage },
      { attempt: 1, replySchema, question: 'q', messages, reportUsage },
    ]);
  });

  it("acheck() gives every call a signal of Booth's own, which aborts with the caller's", async () => {
    const caller = new AbortController();
    const { signal } = caller;
    const infos: unknown[] = [];
    await acheck(
      (_prompt, info) => {
        infos.push(info);
        return envelope('Paris', 0.9);
      },
      'q',
      { signal },
    );
    expect(infos).toEqual([{ attempt: 0, signal: expect.any(AbortSignal), replySchema: replySchemaOf(null), question: 'q', messages: expect.any(Array), reportUsage: expect.any(Function) }]);
    const given = (infos[0] as { signal: AbortSignal }).signal;
    expect(given.aborted).toBe(false);
    caller.abort(new Error('stop'));
    expect(given.aborted).toBe(true);
    expect(given.reason).toEqual(new Error('stop'));
  });
});

describe('§5 calling the model', () => {
  it('§5 a throw becomes a failed attempt and never escapes', () => {
    const result = check(scripted([{ throws: new RangeError('rate limited') }, envelope('Paris', 0.9)]).sync, 'q');
    expect(result.status).toBe('REPAIRED');
    expect(result.attempts[0]).toMatchObject({
      callFailed: true,
      parseOk: false,
      error: 'rate limited',
      rawText: 'RangeError: rate limited',
    });
  });

  it('§5 a thrown non-Error value counts as name Error, message String(value)', () => {
    const result = check(scripted([{ throws: 404 }, { throws: null }]).sync, 'q');
    expect(result.attempts.map((a) => [a.rawText, a.error])).toEqual([
      ['Error: 404', '404'],
      ['Error: null', 'null'],
    ]);
  });

  it('§1 any object with a string message is an error: its name if a string, else Error', () => {
    const result = check(
      scripted([{ throws: { name: 'HttpError', message: 'bad gateway' } }, { throws: { name: 7, message: 'odd' } }]).sync,
      'q',
    );
    expect(result.attempts.map((a) => a.rawText)).toEqual(['HttpError: bad gateway', 'Error: odd']);
  });

  it('§1 errors from other realms count as errors', async () => {
    const { runInNewContext } = await import('node:vm');
    const foreign = runInNewContext('new TypeError("from elsewhere")') as unknown;
    expect(foreign).not.toBeInstanceOf(Error);
    const result = check(scripted([{ throws: foreign }]).sync, 'q', { maxRetries: 0 });
    expect(result.attempts[0]?.rawText).toBe('TypeError: from elsewhere');
  });

  it('§1 a value whose String() throws is "<unprintable value>"', () => {
    const hostile = {
      toString() {
        throw new Error('no');
      },
    };
    const result = check(scripted([{ throws: hostile }]).sync, 'q', { maxRetries: 0 });
    expect(result.attempts[0]?.error).toBe('<unprintable value>');
  });

  it('§5 a non-string return is a failed call saying a string was expected', () => {
    const values = [null, undefined, { text: 'x' }, 42, ['x']];
    const result = check(scripted(values.map((returns) => ({ returns }))).sync, 'q', { maxRetries: values.length - 1 });
    expect(result.status).toBe('UNCERTAIN');
    for (const attempt of result.attempts) {
      expect(attempt.callFailed).toBe(true);
      expect(attempt.error).toMatch(/expected string/);
      expect(attempt.rawText).toBe(`TypeError: ${attempt.error}`);
    }
    expect(result.attempts[0]?.error).toMatch(/null/);
  });

  it('§5 check(): a returned Promise is a TypeError thrown at once, its rejection handled', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      expect(() => check(() => Promise.reject(new Error('late')) as unknown as string, 'q')).toThrow(
        /Promise.*acheck\(\)/,
      );
      const thenable = { then: (_: unknown, reject: (e: Error) => void) => reject(new Error('x')) };
      expect(() => check(() => thenable as unknown as string, 'q')).toThrow(TypeError);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });

  it('§1 acheck(): callFn may be a plain function returning a string or a Promise [differs]', async () => {
    expect((await acheck(() => envelope('Paris', 0.9), 'q')).status).toBe('VERIFIED');
    expect((await acheck(() => Promise.resolve(envelope('Paris', 0.9)), 'q')).status).toBe('VERIFIED');
    const thenable = { then: (resolve: (text: string) => void) => resolve(envelope('Paris', 0.9)) };
    expect((await acheck(() => thenable as unknown as PromiseLike<string>, 'q')).status).toBe('VERIFIED');
  });

  it('§5 acheck(): a rejected Promise is a failed call', async () => {
    const result = await acheck(scripted([{ throws: new Error('503') }, envelope('Paris', 0.9)]).async, 'q');
    expect(result.status).toBe('REPAIRED');
    expect(result.attempts[0]).toMatchObject({ callFailed: true, rawText: 'Error: 503' });
  });

  it('§5 an empty string is a parse failure, not a call failure', () => {
    const result = check(() => '', 'q', { maxRetries: 0 });
    expect(result.attempts[0]).toMatchObject({ callFailed: false, parseOk: false });
    expect(result.attempts[0]?.error).toMatch(/empty/);
  });
});

describe('§5 acheck() with a signal', () => {
  it('an already-aborted signal rejects with its reason and makes no call', async () => {
    const callFn = vi.fn(() => envelope('Paris', 0.9));
    const reason = new Error('cancelled by user');
    await expect(acheck(callFn, 'q', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(callFn).not.toHaveBeenCalled();
  });

  it('an abort during a call rejects at once, without waiting for the call', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    let release: (text: string) => void = () => {};
    const callFn = vi.fn(() => new Promise<string>((resolve) => (release = resolve)));
    const onAttempt = vi.fn();
    const pending = acheck(callFn, 'q', { signal: controller.signal, onAttempt });
    await Promise.resolve();
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    release(envelope('Paris', 0.9));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(callFn).toHaveBeenCalledTimes(1);
    expect(onAttempt).not.toHaveBeenCalled();
  });

  it('a call that rejects after the abort leaves no unhandled rejection', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const controller = new AbortController();
      let fail: (error: Error) => void = () => {};
      const pending = acheck(() => new Promise<string>((_, reject) => (fail = reject)), 'q', { signal: controller.signal });
      await Promise.resolve();
      controller.abort();
      await expect(pending).rejects.toHaveProperty('name', 'AbortError');
      fail(new Error('late failure'));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });

  it('an abort inside a synchronous call makes no further call, and the reply is not recorded', async () => {
    const controller = new AbortController();
    const onAttempt = vi.fn();
    const callFn = vi.fn(() => {
      controller.abort('enough');
      return 'unparseable, would be retried';
    });
    await expect(acheck(callFn, 'q', { signal: controller.signal, onAttempt, maxRetries: 3 })).rejects.toBe('enough');
    expect(callFn).toHaveBeenCalledTimes(1);
    expect(onAttempt).not.toHaveBeenCalled();
  });

  it('an abort between attempts stops before the next call', async () => {
    const controller = new AbortController();
    const callFn = vi.fn(async () => 'not json');
    const pending = acheck(callFn, 'q', {
      signal: controller.signal,
      maxRetries: 5,
      onAttempt: () => controller.abort(new Error('seen enough')),
    });
    await expect(pending).rejects.toThrow('seen enough');
    expect(callFn).toHaveBeenCalledTimes(1);
  });

  it('an abort after the final decision changes nothing', async () => {
    const controller = new AbortController();
    const result = await acheck(() => envelope('Paris', 0.9), 'q', { signal: controller.signal });
    controller.abort();
    expect(result.status).toBe('VERIFIED');
  });
});
