import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { differences } from './fuzz/compare.js';
import { reply } from './fuzz/replies.js';

/**
 * Booth's reader against an oracle written from the rules in docs/api.md (Reading the reply)
 * with `JSON.parse` (tests/reply/fuzz/oracle.ts), field by field, on generated and damaged replies.
 * `npm run fuzz -- --cases 1000000` runs the same property for as long as you like.
 */

describe('the reader agrees with a JSON.parse oracle', () => {
  it('on the replies the fuzzing found forging answers', () => {
    for (const found of [
      '{"answe\\u72\u0010\u0010":"Paris","confidence":0.9}',
      '{"answer":"Paris","confidence":0.9,"ambiguous":"\\u74\u0010\u0010rue"}',
    ]) {
      expect(differences(found)).toEqual([]);
    }
  });

  it('on 20 000 generated, wrapped and damaged replies', { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(reply, (text) => {
        const found = differences(text);
        if (found.length > 0) throw new Error(`${JSON.stringify(text)}\n${found.join('\n')}`);
      }),
      // `npm run mutate` runs this for every surviving reader mutant: there a tenth is enough.
      { numRuns: process.env.BOOTH_MUTATE === '1' ? 2_000 : 20_000 },
    );
  });
});
