import { describe, expect, it } from 'vitest';
import { check } from '../../src/index.js';
import { parseReply } from '../../src/reply/parse.js';
import { envelope } from '../fixtures/helpers.js';

/**
 * Replies built to hurt: each must come back promptly (the test timeout is the bound;
 * speed itself is measured by `npm run bench`) with a clear failure or a result, and
 * must never touch an object prototype.
 */

const single = (reply: string) => {
  const result = check(() => reply, 'q', { maxRetries: 0 });
  const [attempt] = result.attempts;
  if (!attempt) throw new Error('no attempt');
  return { result, attempt };
};

describe('hostile replies', () => {
  it('5 MB of prose is a clear "no JSON object" failure', { timeout: 10_000 }, () => {
    const { attempt } = single('All work and no play makes a model verbose. '.repeat(120_000));
    expect(attempt.parseOk).toBe(false);
    expect(attempt.error).toMatch(/no JSON object/);
  });

  it('5 MB of prose with the envelope at its end still parses', { timeout: 10_000 }, () => {
    const { attempt } = single(`${'blah {not json} '.repeat(300_000)}${envelope('Paris', 0.9)}`);
    expect(attempt.answer).toBe('Paris');
  });

  it('100 000 `{` characters fail cleanly', { timeout: 10_000 }, () => {
    const { attempt } = single('{'.repeat(100_000));
    expect(attempt.error).toMatch(/no JSON object/);
  });

  it('100 000 `{` inside a JSON string are each looked at once', { timeout: 10_000 }, () => {
    const reply = `{"answer": "${'{'.repeat(100_000)}", "confidence": 0.9}`;
    expect(single(reply).attempt.answer).toHaveLength(100_000);
    expect(single(`${'{"'.repeat(50_000)}`).attempt.parseOk).toBe(false);
  });

  it('deeply nested JSON (100 000 levels) is rejected by depth without overflowing the stack', { timeout: 10_000 }, () => {
    const depth = 100_000;
    const nested = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    expect(single(nested).attempt.error).toMatch(/nests 100000 levels deep; Booth reads objects at most 512 deep/);
    const arrays = `{"answer": "x", "confidence": 0.9, "a": ${'['.repeat(depth)}${']'.repeat(depth)}}`;
    expect(single(arrays).attempt.error).toMatch(/nests 100001 levels deep/);
  });

  it('an envelope nested 100 000 levels inside other objects is still found', { timeout: 10_000 }, () => {
    const depth = 100_000;
    const wrapped = `${'{"a":'.repeat(depth)}${envelope('deep', 0.9)}${'}'.repeat(depth)}`;
    expect(single(wrapped).attempt.answer).toBe('deep');
  });

  it('deeply nested unclosed JSON fails without overflowing the stack', { timeout: 10_000 }, () => {
    expect(single('{"a":'.repeat(100_000)).attempt.error).toMatch(/no JSON object/);
  });

  it('a "__proto__" key never reaches a prototype, at any depth', () => {
    const reply = '{"__proto__": {"polluted": 1}, "answer": "x", "confidence": 0.9, "n": {"__proto__": {"polluted": 2}}}';
    const { result } = single(reply);
    expect(result.answer).toBe('x');
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(result.parsed)).toBe(Object.prototype);
    const inner = result.parsed?.['n'] as object;
    expect(Object.getPrototypeOf(inner)).toBe(Object.prototype);
    expect(Object.keys(inner)).toEqual(['__proto__']);
  });

  it('a wrapped envelope under "__proto__" is still found, as an own property', () => {
    const { result } = single(`{"__proto__": ${envelope('hidden', 0.9)}}`);
    expect(result.answer).toBe('hidden');
  });

  it('lone surrogates pass through untouched, raw or escaped', () => {
    expect(single(envelope('\ud800 and \udfff', 0.9)).attempt.answer).toBe('\ud800 and \udfff');
    expect(single('{"answer": "\\ud800", "confidence": 0.9}').attempt.answer).toBe('\ud800');
    expect(single(`\udc00${envelope('ok', 0.9)}\ud800`).attempt.answer).toBe('ok');
  });

  it('a NUL byte and other control characters outside strings do not confuse the search', () => {
    expect(parseReply(`\u0000\u0007${envelope('ok', 0.9)}\u0000`).ok).toBe(true);
  });

  it('an answer of 1 MB is kept whole', () => {
    const big = 'x'.repeat(1_000_000);
    expect(single(envelope(big, 0.9)).attempt.answer).toBe(big);
  });
});
