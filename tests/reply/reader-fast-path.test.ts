import { describe, expect, it } from 'vitest';
import { isObjectText } from '../../src/reply/json-objects.js';
import { MAX_DEPTH, parseReply } from '../../src/reply/parse.js';
import { envelope } from '../fixtures/helpers.js';

/**
 * The reader keeps only a candidate's answer, confidence and ambiguous members while it
 * judges it, and builds the one it accepts with JSON.parse: these are the edges where the
 * kept members and the built object could tell different stories.
 */

const read = (reply: string) => {
  const reading = parseReply(reply);
  if (!reading.ok) throw new Error(reading.error);
  return reading;
};

describe('the members judged and the object built agree', () => {
  it('a whole reply that is valid JSON but breaks a rule gives way to a nested envelope only when it is no envelope itself', () => {
    expect(read(`{"result": ${envelope('inner', 0.9)}}`).answer).toBe('inner');
    // With an "answer" key it is the model's own envelope gone wrong: what it nests is an example, never its replacement.
    expect(parseReply(`{"answer": "outer", "details": ${envelope('inner', 0.9)}}`)).toEqual({
      ok: false,
      error: '"confidence" is missing or null; the object needs both "answer" and "confidence"',
    });
    expect(parseReply(`{"result": {"answer": "inner"}}`)).toEqual({
      ok: false,
      error: '"answer" is missing or null; the object needs both "answer" and "confidence"',
    });
  });

  it('duplicate keys: the last value is judged and kept, whichever kind the first was', () => {
    expect(read('{"answer": {"a": 1}, "answer": "b", "confidence": true, "confidence": 0.5}')).toMatchObject({ answer: 'b', confidence: 0.5 });
    expect(parseReply('{"answer": "b", "confidence": 0.5, "answer": ["x"]}')).toMatchObject({ ok: false, error: expect.stringMatching(/not an array/) });
    expect(parseReply('{"answer": "b", "confidence": 0.5, "answer": {}}')).toMatchObject({ ok: false, error: expect.stringMatching(/not an object/) });
  });

  it('keys written with escapes are the same keys', () => {
    const reading = read('{"\\u0061nswer": "Paris", "confidenc\\u0065": 0.9, "\\u0061mbiguous": "TRUE"}');
    expect(reading).toMatchObject({ answer: 'Paris', confidence: 0.9, ambiguous: true });
    expect(reading.parsed).toEqual({ answer: 'Paris', confidence: 0.9, ambiguous: 'TRUE' });
  });

  it('escaped values decode as JSON.parse decodes them, and a near-miss key is not the key', () => {
    expect(read('{"answer": "\\"P\\u00e1ris\\"\\n", "confidence": 0.9}').answer).toBe('"Páris"\n');
    expect(parseReply('{"answers": "x", "answe": "y", "confidence": 0.9}')).toMatchObject({ ok: false, error: expect.stringMatching(/"answer" is missing/) });
    expect(parseReply('{"Answer": "x", "answex": "y", "confidence": 0.9}')).toMatchObject({ ok: false, error: expect.stringMatching(/"answer" is missing/) });
  });

  it('"__proto__" keys stay own properties of the built object, at the top and nested', () => {
    const reply = '{"__proto__": {"x": 1}, "answer": "a", "confidence": 0.9, "n": {"__proto__": []}}';
    const { parsed } = read(reply);
    expect(Object.hasOwn(parsed, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(JSON.stringify(parsed)).toBe(JSON.stringify(JSON.parse(reply)));
  });

  it('the built object is frozen all through, including arrays nested in arrays', () => {
    const { parsed } = read('{"answer": "a", "confidence": 0.9, "x": [[{"y": [1]}]]}');
    const x = parsed['x'] as unknown as Array<Array<{ y: number[] }>>;
    for (const value of [parsed, x, x[0], x[0]?.[0], x[0]?.[0]?.y]) expect(Object.isFrozen(value)).toBe(true);
  });

  it('-0, big numbers and lone surrogates come through as JSON.parse gives them', () => {
    const reading = read('{"answer": "\\ud800", "confidence": -0, "n": 1e400, "m": 12345678901234567890}');
    expect(Object.is(reading.confidence, -0)).toBe(true);
    expect(reading.answer).toBe('\ud800');
    expect(reading.parsed['n']).toBe(Number.POSITIVE_INFINITY);
    expect(reading.parsed['m']).toBe(12345678901234567890);
  });

  it(`a whole reply ${MAX_DEPTH + 1} deep is rejected by depth, and an envelope inside it still found`, () => {
    const deep = (inner: string) => `${'{"a":'.repeat(MAX_DEPTH)}${inner}${'}'.repeat(MAX_DEPTH)}`;
    expect(parseReply(deep('{}')).ok).toBe(false);
    expect(parseReply(deep('{}'))).toMatchObject({ error: expect.stringMatching(`nests ${MAX_DEPTH + 1} levels deep`) });
    expect(read(deep(envelope('deep', 0.9))).answer).toBe('deep');
  });

  it("whitespace outside JSON's four is trimmed around the reply but invalid inside it", () => {
    expect(read(`\u00a0${envelope('a', 0.9)}\u2028`).answer).toBe('a');
    expect(parseReply('{"answer":\u00a0"a", "confidence": 0.9}')).toEqual({ ok: false, error: 'no JSON object was found in the reply' });
  });

  it('a second read reuses what the first one learned: a failed whole reply, then its inner objects', () => {
    const reply = `{"a": ${envelope('first', 0.9)}, "b": {"answer": "x"} oops}`;
    expect(read(reply).answer).toBe('first');
    expect(read(`{"a": {"answer": "x"}, "b": ${envelope('second', 0.9)} oops}`).answer).toBe('second');
  });

  it('a reply with no brace is settled without reading', () => {
    expect(parseReply('just prose')).toEqual({ ok: false, error: 'no JSON object was found in the reply' });
  });
});

describe('a whole reply read in one check agrees with the full path', () => {
  const nested = (levels: number) => `{"answer": "a", "confidence": 0.9, "x": ${'['.repeat(levels)}${']'.repeat(levels)}}`;

  it(`nesting exactly ${MAX_DEPTH} deep is accepted, one more is rejected by depth`, () => {
    expect(read(nested(MAX_DEPTH - 1)).answer).toBe('a');
    expect(read(`Answer: ${nested(MAX_DEPTH - 1)}`).answer).toBe('a');
    expect(parseReply(`Answer: ${nested(MAX_DEPTH)}`)).toMatchObject({ ok: false, error: expect.stringMatching(`nests ${MAX_DEPTH + 1} levels deep`) });
    expect(parseReply(nested(MAX_DEPTH))).toMatchObject({ ok: false, error: expect.stringMatching(`nests ${MAX_DEPTH + 1} levels deep`) });
  });

  it(`an object exactly ${MAX_DEPTH} deep that breaks another rule is reported by that rule`, () => {
    expect(parseReply(`{"answer": "a", "x": ${'['.repeat(MAX_DEPTH - 1)}${']'.repeat(MAX_DEPTH - 1)}}`)).toEqual({
      ok: false,
      error: '"confidence" is missing or null; the object needs both "answer" and "confidence"',
    });
  });

  it('strings the check rejects fall back to the objects inside, or to no object', () => {
    const error = { ok: false, error: 'no JSON object was found in the reply' };
    expect(parseReply('{"answer": "a\tb", "confidence": 0.9}')).toEqual(error);
    expect(parseReply('{"answer": "a\\xb", "confidence": 0.9}')).toEqual(error);
    expect(parseReply('{"answer": "\\u00g1", "confidence": 0.9}')).toEqual(error);
    expect(parseReply('{"answer": "a}')).toEqual(error);
    expect(parseReply('{"answer": "a\\}')).toEqual(error);
    expect(read(`{"answer": "a\u0001", "inner": ${envelope('inner', 0.9)}}`).answer).toBe('inner');
  });

  it('characters past the backslash, quotes and escapes inside strings are kept as JSON.parse keeps them', () => {
    const reading = read('{"answer": "P\u00e1ris \u2028 ]}[{ \\"q\\" \\\\ \\/", "confidence": 0.9}');
    expect(reading.answer).toBe('P\u00e1ris \u2028 ]}[{ "q" \\ /');
  });

  it('an object that closes before the end of the reply is not the whole reply', () => {
    expect(read(`${envelope('first', 0.9)} ${envelope('second', 0.8)}`).answer).toBe('first');
    expect(read(`{"answer": "a", "confidence": 0.9}}`).answer).toBe('a');
  });

  it('a reply too long for the one check is read by the full path to the same verdict', () => {
    const padding = `"pad": "${'x'.repeat(70_000)}"`;
    const reading = read(`{${padding}, "answer": "long", "confidence": 0.9, "x": [{"y": 1}]}`);
    expect(reading.answer).toBe('long');
    expect(Object.isFrozen((reading.parsed['x'] as unknown as object[])[0])).toBe(true);
    expect(read(`{${padding}, "result": ${envelope('inner', 0.9)}}`).answer).toBe('inner');
    expect(parseReply(`{${padding}, "answer": "outer", "inner": ${envelope('inner', 0.9)}}`)).toMatchObject({ ok: false, error: expect.stringMatching(/"confidence" is missing/) });
  });

  it('an array or a scalar as the whole reply is no object', () => {
    expect(read(`[${envelope('in array', 0.9)}]`).answer).toBe('in array');
    expect(parseReply('"{}"')).toMatchObject({ ok: false, error: expect.stringMatching(/"answer" is missing/) });
  });

  it('the check reads exactly from start, which must hold a `{`, to end', () => {
    const text = ' x{"a": 1} ';
    expect(isObjectText(text, 2, 10, MAX_DEPTH)).toBe(true);
    expect(isObjectText(text, 2, 11, MAX_DEPTH)).toBe(false);
    expect(isObjectText(text, 2, 9, MAX_DEPTH)).toBe(false);
    expect(isObjectText(text, 1, 10, MAX_DEPTH)).toBe(false);
    expect(isObjectText('{} {}', 0, 5, MAX_DEPTH)).toBe(false);
  });

  it('the check counts every object and array toward the depth limit, however deep', () => {
    expect(isObjectText('{"a": [{"b": []}]}', 0, 18, 4)).toBe(true);
    expect(isObjectText('{"a": [{"b": []}]}', 0, 18, 3)).toBe(false);
    for (const levels of [1, 100, 1000]) {
      const deep = `${'{"a": ['.repeat(levels)}${']}'.repeat(levels)}`;
      expect(isObjectText(deep, 0, deep.length, 2 * levels)).toBe(true);
      expect(isObjectText(deep, 0, deep.length, 2 * levels - 1)).toBe(false);
    }
  });
});
