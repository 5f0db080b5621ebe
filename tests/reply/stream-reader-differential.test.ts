import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { literalReplies } from './fuzz/literal-replies.js';
import { reply } from './fuzz/replies.js';
import { feed, RULES, streamDifferences } from './fuzz/stream-compare.js';

/**
 * The reader differential of #31: every reply of the fuzz corpus, of JSONTestSuite and of the
 * reader tests is fed to the streaming reader (src/reply/stream-reader.ts) in eight chunkings
 * (one chunk; one character; seeded random sizes; every surrogate pair split; every escape
 * split at every position) under three answer rules, and compared field by field with the
 * object the reply begins with as `JSON.parse` reads it and with `parseReply`
 * (tests/reply/fuzz/stream-compare.ts says what is compared). `npm run fuzz -- --stream`
 * runs the generated part for as long as you like.
 */

const expectAgreement = (replies: Iterable<string>, seed: number) => {
  let compared = 0;
  const disagreements: string[] = [];
  for (const text of replies) {
    const found = streamDifferences(text, { seed: seed + compared });
    compared += 1;
    if (found.length > 0 && disagreements.length < 5) disagreements.push(`${JSON.stringify(text)}\n  ${found.slice(0, 4).join('\n  ')}`);
  }
  expect(disagreements).toEqual([]);
  return compared;
};

describe('the streaming reader agrees with the finished text', () => {
  it('on 1 000 generated, wrapped and damaged replies of the fuzz corpus', { timeout: 300_000 }, () => {
    const replies = fc.sample(reply, { seed: 31, numRuns: 1_000 });
    expect(expectAgreement(replies, 1)).toBe(1_000);
  });

  it('on any chunk sizes fast-check picks: the same fields as in one chunk', { timeout: 300_000 }, () => {
    fc.assert(
      fc.property(reply, fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 40 }), fc.constantFrom(...RULES), (text, sizes, rule) => {
        const cuts: number[] = [];
        for (let at = 0, i = 0; ; i += 1) {
          at += sizes[i % sizes.length]!;
          if (at >= text.length) break;
          cuts.push(at);
        }
        expect(feed(text, cuts, rule).fields).toEqual(feed(text, [], rule).fields);
      }),
      { numRuns: 1_000, seed: 3_100 },
    );
  });

  describe('on JSONTestSuite (tests/fixtures/JSONTestSuite), each file in six places', () => {
    const folder = fileURLToPath(new URL('../fixtures/JSONTestSuite/test_parsing/', import.meta.url));
    const files = readdirSync(folder).filter((name) => name.endsWith('.json'));
    // Decoded as UTF-8 as a model client would, as json-test-suite.test.ts decodes them.
    const decode = (name: string) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(readFileSync(join(folder, name)));
    const places: Record<string, (value: string) => string> = {
      'the whole reply': (value) => value,
      'a member before the envelope’s (as json-test-suite.test.ts)': (value) => `{"json_test_suite_value": ${value}, "answer": "a", "confidence": 0.9}`,
      'the answer': (value) => `{"ambiguous": false, "interpretations": [], "answer": ${value}, "confidence": 0.9}`,
      'the readings': (value) => `{"ambiguous": true, "interpretations": ${value}, "answer": "a", "confidence": 0.5}`,
      'a fenced answer after "TRUE"': (value) => `\`\`\`json\n{"ambiguous": "TRUE", "answer": ${value}, "confidence": 0.9}\n\`\`\``,
      'the answer’s text, as a string': (value) => `{"answer": ${JSON.stringify(value)}, "confidence": 0.9}`,
    };

    it('has the 318 files', () => expect(files).toHaveLength(318));

    for (const [place, make] of Object.entries(places)) {
      it(`as ${place}`, { timeout: 300_000 }, () => {
        expect(expectAgreement(files.map((name) => make(decode(name))), 318 * Object.keys(places).indexOf(place))).toBe(318);
      });
    }
  });

  it('on the replies the reader tests write out (the conformance replies)', { timeout: 300_000 }, () => {
    const replies = literalReplies();
    // The corpus follows the tests; it must not silently shrink to nothing.
    expect(replies.length).toBeGreaterThan(150);
    expect(expectAgreement(replies, 77)).toBe(replies.length);
  });
});
