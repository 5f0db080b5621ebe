import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isObjectText } from '../../src/reply/json-objects.js';
import { MAX_DEPTH, parseReply } from '../../src/reply/parse.js';

/**
 * Every parsing case of JSONTestSuite (MIT, tests/fixtures/JSONTestSuite), embedded as a
 * value in an envelope: Booth accepts the envelope exactly when `JSON.parse` accepts the
 * file, and then reads the same value. Files are decoded as UTF-8 as a model client would
 * (invalid bytes become U+FFFD, a BOM stays a character).
 */

const folder = fileURLToPath(new URL('../fixtures/JSONTestSuite/test_parsing/', import.meta.url));
const files = readdirSync(folder).filter((name) => name.endsWith('.json'));
const decode = (name: string) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(readFileSync(join(folder, name)));
/**
 * Trailing text after the value is not ignored here: the envelope's next member follows it.
 * A broken file can leave an inner object that takes the envelope's last members (an
 * unclosed `{"asd": "asd"` does); the rules rightly accept that one, so the test asks
 * whether the envelope itself, marked by its key, was read.
 */
const KEY = 'json_test_suite_value';
const embed = (value: string) => `{"${KEY}": ${value}, "answer": "a", "confidence": 0.9}`;
const readsEnvelope = (text: string) => {
  const reading = parseReply(embed(text));
  return reading.ok && Object.hasOwn(reading.parsed, KEY) ? reading.parsed[KEY] : NOT_READ;
};
const NOT_READ = Symbol('not read');
const parses = (text: string) => {
  try {
    return { ok: true as const, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false as const };
  }
};

describe('JSONTestSuite', () => {
  it('has all 318 files of test_parsing, y_, n_ and i_', () => {
    expect(files).toHaveLength(318);
    for (const prefix of ['y_', 'n_', 'i_']) expect(files.some((name) => name.startsWith(prefix))).toBe(true);
  });

  it('embedding a file changes nothing for JSON.parse, so the envelope is a fair test', () => {
    for (const name of files) expect(parses(embed(decode(name))).ok, name).toBe(parses(decode(name)).ok);
  });

  it('the whole-reply check says a file is one object exactly when JSON.parse reads it as one', () => {
    for (const name of files) {
      const text = decode(name);
      const expected = parses(text);
      const isObject = expected.ok && typeof expected.value === 'object' && expected.value !== null && !Array.isArray(expected.value);
      // The check reads from a `{` to exactly `end`: whitespace around the object is the caller's to trim.
      const bare = text.startsWith('{') && text.endsWith('}');
      expect(isObjectText(text, 0, text.length, MAX_DEPTH), name).toBe(isObject && bare);
      expect(isObjectText(embed(text), 0, embed(text).length, MAX_DEPTH), name).toBe(expected.ok);
    }
  });

  for (const name of files) {
    it(`${name}: accepted exactly when JSON.parse accepts it`, () => {
      const text = decode(name);
      const expected = parses(text);
      const value = readsEnvelope(text);
      expect(value !== NOT_READ).toBe(expected.ok);
      if (expected.ok) {
        expect(JSON.stringify(value)).toBe(JSON.stringify(expected.value));
        expect(value).toEqual(expected.value);
      }
      if (name.startsWith('y_')) expect(value).not.toBe(NOT_READ);
      if (name.startsWith('n_')) expect(value).toBe(NOT_READ);
    });
  }
});
