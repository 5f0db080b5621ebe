import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgreeFn, agreementKey, defaultAgree, normalizedText, type Voter, voteOf } from '../../src/decide/agreement.js';
import { acheck, check } from '../../src/index.js';
import { envelope } from '../fixtures/helpers.js';
import { longestStall } from '../fixtures/event-loop.js';

/**
 * Issue 24, item 4: a vote of many long answers must cost the length of its answers, not that
 * times the number of pairs, and must not hold the event loop in one long stretch. It once
 * normalized both answers of every pair: 20 distinct 1 MB replies held the loop for seconds,
 * and a queue worker lost its job locks.
 */

const MB = 1 << 20;

/** Prose of about `chars` characters, distinct per `i` only at its very end: the worst case for a comparison. */
const prose = (i: number, chars = MB) => `${'lorem ipsum dolor sit amet, '.repeat(Math.ceil(chars / 28)).slice(0, chars)} ${i}`;

describe('the default agree, by key', () => {
  it('normalizedText gives what the original formula gave, whatever the white space', () => {
    const original = (text: string) => text.normalize('NFKC').trim().toUpperCase().toLowerCase().replace(/\s+/g, ' ').replace(/\.$/, '').trim();
    const piece = fc.oneof(
      fc.constantFrom(' ', '  ', '\t', '\n', ' \n ', '\u00a0', '\u2028', '\u3000', '\ufeff', '.', '. ', 'ß', 'Ｐ', 'ς', 'İ'),
      fc.string({ maxLength: 4 }),
      fc.string({ unit: 'binary', maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const text = pieces.join('');
        expect(normalizedText(text)).toBe(original(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('grouping by key makes the clusters the documented pairwise grouping makes, for text and for JSON', () => {
    const texts = fc.constantFrom('Paris', 'paris.', ' PARIS ', 'Lyon', 'lyon', 'Straße', 'STRASSE', '', ' ', '3.14', '314');
    const values = fc.oneof(texts, fc.constantFrom<unknown>({ a: 1, b: [2] }, { b: [2], a: 1 }, null, 1, '1', [1], { a: null }));
    const voters = (answer: fc.Arbitrary<unknown>) =>
      fc.array(fc.record({ answer, confidence: fc.double({ min: 0, max: 1, noNaN: true }), ambiguous: fc.boolean() }), { maxLength: 12 });
    for (const typed of [false, true]) {
      const byDefault = defaultAgree(typed);
      // The same comparison through a function of the caller's: voteOf then asks it pair by pair.
      const asCustom: AgreeFn<unknown> = (a, b) => byDefault(a, b);
      fc.assert(
        fc.property(voters(typed ? values : texts), (given) => {
          const list: Voter[] = given.map((voter, index) => ({ index, ...voter }));
          expect(voteOf(list, byDefault)).toEqual(voteOf(list, asCustom));
        }),
        { numRuns: 500 },
      );
    }
  });

  it('a key is the whole answer: two megabyte answers that differ in their last character do not agree, two that differ in case do', () => {
    const voters: Voter[] = [prose(1), prose(2), prose(1).toUpperCase(), `${prose(1)}.`].map((answer, index) => ({ index, answer, confidence: 0.9 }));
    const { clusters } = voteOf(voters, defaultAgree(false));
    expect(clusters.map((c) => c.samples)).toEqual([[0, 2, 3], [1]]);
    expect(agreementKey(prose(1), false).text).not.toBe(agreementKey(prose(2), false).text);
  });

  it('keys with equal hashes but different texts are kept apart: the hash finds candidates, the text decides', () => {
    const voters: Voter[] = ['a', 'b', 'a'].map((text, index) => ({ index, answer: text, confidence: 0.5, key: { text, hash: 7 } }));
    expect(voteOf(voters, defaultAgree(false)).clusters.map((c) => c.samples)).toEqual([[0, 2], [1]]);
  });

  it('a custom agree is still asked pair by pair, with each cluster’s first answer', () => {
    const asked: Array<[unknown, unknown]> = [];
    const agree: AgreeFn<unknown> = (a, b) => {
      asked.push([a, b]);
      return String(a)[0] === String(b)[0];
    };
    const voters: Voter[] = ['apple', 'banana', 'avocado', 'blueberry', 'cherry'].map((answer, index) => ({ index, answer, confidence: 0.5 }));
    expect(voteOf(voters, agree).clusters.map((c) => c.samples)).toEqual([[0, 2], [1, 3], [4]]);
    expect(asked).toEqual([
      ['apple', 'banana'],
      ['apple', 'avocado'],
      ['apple', 'blueberry'],
      ['banana', 'blueberry'],
      ['apple', 'cherry'],
      ['banana', 'cherry'],
    ]);
  });
});

/**
 * Half a second, not less: each reply is read and keyed in one stretch (some tens of
 * milliseconds a megabyte), and on a machine shared with other test runs a stretch has been
 * seen to take 300 ms. The vote that compared every pair held the loop for 6 s here.
 */
const STALL_MS = 500;

describe('a vote of 20 samples of 1 MB each', () => {
  const replies = Array.from({ length: 20 }, (_, i) => envelope(prose(i), 0.9));

  it('acheck never holds the event loop for long: the longest gap between 10 ms heartbeats stays under half a second', async () => {
    const { stallMs, value } = await longestStall(() => acheck(async (_, { sample }) => replies[sample!]!, 'Describe it.', { samples: 20, maxRetries: 0 }));
    const result = value as Awaited<ReturnType<typeof acheck>>;
    // Every answer differs (in its last characters only): 20 clusters of one, so the vote says little and the run is UNCERTAIN.
    expect(result.attempts[0]?.clusters?.map((c) => c.samples)).toEqual(Array.from({ length: 20 }, (_, i) => [i]));
    expect(result.status).toBe('UNCERTAIN');
    expect(stallMs).toBeLessThan(STALL_MS);
  }, 60_000);

  it('with a schema too, and answers that agree are still found to agree', async () => {
    const same = envelope(prose(0), 0.9);
    const typed = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? same : replies[i]!));
    const { stallMs, value } = await longestStall(() =>
      acheck(async (_, { sample }) => typed[sample!]!, 'Describe it.', { samples: 20, maxRetries: 0, schema: z.string() }),
    );
    const result = value as Awaited<ReturnType<typeof acheck>>;
    expect(result.attempts[0]?.clusters?.[0]?.samples).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    expect(result.attempts[0]?.clusters).toHaveLength(11);
    expect(stallMs).toBeLessThan(STALL_MS);
  }, 60_000);

  it('check(), which cannot yield, votes in time linear in the samples: all 20 in well under a second of voting', () => {
    const started = performance.now();
    const result = check((_, { sample }) => replies[sample!]!, 'Describe it.', { samples: 20, maxRetries: 0 });
    expect(result.attempts[0]?.clusters).toHaveLength(20);
    expect(performance.now() - started).toBeLessThan(2_000);
  }, 60_000);
});
