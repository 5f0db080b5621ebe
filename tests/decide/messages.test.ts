import { describe, expect, it } from 'vitest';
import { BoothRejected, check, checkWithEvidence, type Validator } from '../../src/index.js';
import { envelope } from '../fixtures/helpers.js';

/** The words logs and users' tests rely on (§11), case-insensitive. */
function expectWords(text: string | null | undefined, ...words: string[]) {
  for (const word of words) expect(text?.toLowerCase(), `"${text}" should contain "${word}"`).toContain(word.toLowerCase());
}

const attemptError = (reply: unknown) => check(() => reply as string, 'q', { maxRetries: 0 }).attempts[0]?.error;
const validationError = (validator: unknown) =>
  check(() => envelope('a', 0.9), 'q', { maxRetries: 0, validator: validator as Validator }).attempts[0]?.validationError;
const detail = (answer: string | null, evidence: unknown[] | null, compare: () => unknown) =>
  checkWithEvidence(answer, evidence, compare as () => number).detail;
const thrownMessage = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a throw');
};

describe('§11 words each message must contain', () => {
  it.each([
    ['no JSON object in the reply', 'just prose', ['JSON']],
    ['empty reply', '   ', ['empty']],
    ['answer missing', '{"confidence": 0.9}', ['missing', 'answer', 'confidence']],
    ['confidence null', '{"answer": "a", "confidence": null}', ['missing', 'answer', 'confidence']],
    ['object answer', envelope({ a: 1 }, 0.9), ['answer']],
    ['boolean confidence', envelope('a', false), ['boolean']],
    ['non-numeric confidence', envelope('a', 'high'), ['confidence']],
    ['confidence out of range', envelope('a', 3), ['range']],
    ['unrecognized ambiguous', envelope('a', 0.9, { ambiguous: 'maybe' }), ['ambiguous']],
    ['blank answer', envelope(' ', 0.9), ['empty']],
  ])('attempt.error: %s', (_situation, reply, words) => {
    expectWords(attemptError(reply), ...words);
  });

  it('attempt.error: non-string callFn return says "expected string"', () => {
    expectWords(attemptError(null), 'expected string');
  });

  it('validationError: false, a throw, an invalid return, a Promise', () => {
    expectWords(validationError(() => false), 'false');
    expectWords(
      validationError(() => {
        throw new URIError('bad uri');
      }),
      'URIError',
      'bad uri',
    );
    expectWords(validationError(() => 'ok'), 'invalid');
    expectWords(validationError(() => Promise.resolve(true)), 'synchronous');
  });

  it('detail: EMPTY_ANSWER, NO_EVIDENCE, false, below threshold, INVALID_SCORE, COMPARE_FAILED', () => {
    expectWords(detail('', ['e'], () => true), 'empty');
    expectWords(detail('a', [], () => true), 'evidence');
    const disagrees = detail('a', ['e'], () => false);
    expectWords(disagrees, 'false');
    expect(disagrees?.toLowerCase()).not.toContain('threshold');
    expect(disagrees).not.toContain('0.7');
    expectWords(detail('a', ['e'], () => 0.25), '0.25', '0.7');
    expectWords(detail('a', ['e'], () => [0.5]), '[0.5]');
    expect(
      detail('a', ['e'], () => {
        throw new TypeError('boom');
      }),
    ).toBe('TypeError: boom');
  });

  it('BoothRejected: the status and the method, never the answer', () => {
    const result = check(() => envelope('the-answer', 0.1), 'q', { maxRetries: 0 });
    const message = thrownMessage(() => result.unwrap());
    expectWords(message, 'UNCERTAIN', 'confidence');
    expect(message).not.toContain('the-answer');
    expect(thrownMessage(() => result.unwrap())).toBe(new BoothRejected(result).message);
  });

  it('thrown messages: prompt, async callFn / onAttempt, Promise returned to check()', () => {
    expectWords(thrownMessage(() => check(() => '', 5 as unknown as string)), 'prompt');
    expectWords(thrownMessage(() => check((async () => '') as unknown as () => string, 'q')), 'synchronous', 'async', 'acheck');
    expectWords(
      thrownMessage(() => check(() => '', 'q', { onAttempt: (async () => {}) as unknown as () => void })),
      'synchronous',
      'async',
      'acheck',
    );
    expectWords(thrownMessage(() => check(() => Promise.resolve('') as unknown as string, 'q')), 'Promise', 'acheck');
  });
});
