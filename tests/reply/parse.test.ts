import { describe, expect, it, vi } from 'vitest';
import { decimalString, EMPTY_REPLY_ERROR, MAX_DEPTH, NO_OBJECT_ERROR, parseReply, type Reading, readObject } from '../../src/reply/parse.js';
import type { JsonObject } from '../../src/reply/json-objects.js';
import { envelope } from '../fixtures/helpers.js';

function read(text: string): Reading {
  const result = parseReply(text);
  if (!result.ok) throw new Error(`expected a reading, got error: ${result.error}`);
  return result;
}

function errorOf(text: string): string {
  const result = parseReply(text);
  if (result.ok) throw new Error(`expected a parse failure, got answer ${result.answer}`);
  return result.error;
}

describe('§4 candidates', () => {
  it('§4.1 the whole reply, trimmed, when it starts with { and ends with }', () => {
    expect(read(`  \n${envelope('Paris', 0.9)}\n\t `).answer).toBe('Paris');
  });

  it('§4.1 uses String.prototype.trim whitespace (no-break space, BOM)', () => {
    expect(read(`\u00a0\ufeff${envelope('Paris', 0.9)}\u2003`).answer).toBe('Paris');
  });

  it('§4.2 two objects on separate lines: the last line wins', () => {
    expect(read(`${envelope('first', 0.9)}\n${envelope('second', 0.9)}`).answer).toBe('second');
  });

  it('§4.2 lines end at \\r\\n, \\n or \\r', () => {
    for (const newline of ['\r\n', '\n', '\r']) {
      expect(read(`${envelope('first', 0.9)}${newline}${envelope('second', 0.9)}${newline}  `).answer).toBe('second');
    }
  });

  it('§4.2 the last line counts once trimmed: indented or followed by spaces', () => {
    expect(read(`${envelope('first', 0.9)}\n  \t${envelope('second', 0.9)}  `).answer).toBe('second');
  });

  it('§4.2 the last line wins after prose too, over an object on an earlier line', () => {
    expect(read(`Here it is: ${envelope('first', 0.9)}\n${envelope('second', 0.9)}`).answer).toBe('second');
  });

  it('§4.3 two objects on one line: the first wins', () => {
    expect(read(`${envelope('first', 0.9)} ${envelope('second', 0.9)}`).answer).toBe('first');
  });

  it('§4.3 prose around the object is tolerated', () => {
    expect(read(`Sure! Here it is: ${envelope('Paris', 0.9)} Hope that helps.`).answer).toBe('Paris');
  });

  it('§4.3 fenced ```json replies are tolerated', () => {
    expect(read(`\`\`\`json\n${envelope('Paris', 0.9)}\n\`\`\``).answer).toBe('Paris');
  });

  it('§4.3 a wrapped envelope {"result": {…}} is recovered [differs: the parent is tried first]', () => {
    const reply = `{"result": ${envelope('Paris', 0.9)}}`;
    const reading = read(reply);
    expect(reading.answer).toBe('Paris');
    expect(Object.keys(reading.parsed)).not.toContain('result');
  });

  it('[differs] an acceptable outer object wins over a nested one', () => {
    const reply = JSON.stringify({ answer: 'outer', confidence: 0.8, details: { answer: 'inner', confidence: 0.9 } });
    expect(read(`note: ${reply} end`).answer).toBe('outer');
  });

  it('§4.3 the object a standard parser reads from a { is used, ignoring what follows', () => {
    expect(read(`x ${envelope('Paris', 0.9)}}}} trailing`).answer).toBe('Paris');
  });

  it('§4.3 objects are tried in order of where they start, a rejected one does not stop the search', () => {
    const reply = `{"answer": "no confidence"} then {"answer": "ok", "confidence": 0.5}`;
    expect(read(reply).answer).toBe('ok');
  });

  it('§4.3 objects inside an array are tried in order too, the first that passes wins', () => {
    expect(read(`["note", ${envelope('first', 0.9)}, ${envelope('second', 0.9)}]`).answer).toBe('first');
  });

  it('§4.3 a complete object inside one whose decode failed is still found', () => {
    const reply = `{"broken": ${envelope('Paris', 0.9)}, oops}`;
    expect(read(reply).answer).toBe('Paris');
  });

  it('§4.3 an object read early as the last line is met again inside a later candidate, and read as before', () => {
    // The last line `{"b": 1}}` is read first (and is no whole object); the `{` inside the string
    // "{" then starts an envelope that holds it, whose reading reuses the one already made.
    const reply = '{"a": "{"answer": "x", "confidence": 0.9, "n": \n{"b": [1, {"c": 2}]}}';
    const reading = parseReply(reply);
    expect(reading.ok && reading.parsed).toEqual({ answer: 'x', confidence: 0.9, n: { b: [1, { c: 2 }] } });
    // The depth comes from that reading too: an inner object at the limit makes the envelope one too deep.
    const deep = `{"a": "{"answer": "x", "confidence": 0.9, "n": \n${'{"b": '.repeat(MAX_DEPTH)}1${'}'.repeat(MAX_DEPTH)}}`;
    expect(errorOf(deep)).toBe(`the JSON object nests ${MAX_DEPTH + 1} levels deep; Booth reads objects at most ${MAX_DEPTH} deep`);
  });

  it('§4.3 an object that starts inside a JSON string is read afresh', () => {
    const inner = '{"answer": "hidden", "confidence": 0.9}';
    const reply = `{"note": "${inner.replaceAll('"', "'")}", "x": 1} ${'{"a":"{}"}'}`;
    // The fresh look at the `{` inside "{}" reads an empty object (rejected), then nothing else is left.
    expect(errorOf(reply)).toMatch(/missing/);
  });

  it('§4 invalid JSON is skipped: single quotes, trailing commas, comments', () => {
    for (const bad of ["{'answer': 'x', 'confidence': 0.9}", '{"answer": "x", "confidence": 0.9,}', '{"answer": "x", /* c */ "confidence": 0.9}']) {
      expect(errorOf(bad)).toBe(NO_OBJECT_ERROR);
    }
  });

  it('§4 NaN and Infinity tokens are invalid JSON [differs]', () => {
    expect(errorOf('{"answer": "x", "confidence": NaN}')).toBe(NO_OBJECT_ERROR);
    expect(errorOf('{"answer": "x", "confidence": Infinity}')).toBe(NO_OBJECT_ERROR);
    expect(errorOf('{"answer": "x", "confidence": -Infinity}')).toBe(NO_OBJECT_ERROR);
  });

  it('§4 a candidate that is valid JSON but not an object is skipped', () => {
    expect(errorOf('["answer", 0.9]')).toBe(NO_OBJECT_ERROR);
    expect(errorOf('"just a string"')).toBe(NO_OBJECT_ERROR);
  });

  it('§4 the error is the reason of the first candidate that decoded to an object', () => {
    const reply = `{"answer": "x"}\n{"answer": "y", "confidence": true}`;
    // The last line is tried first (candidate 2) and rejected for its boolean confidence.
    expect(errorOf(reply)).toMatch(/boolean/);
    expect(errorOf(`{"confidence": 0.9} and {"answer": "x", "confidence": 2}`)).toMatch(/missing/);
  });

  it('§4 no JSON object → an error saying so; empty or blank reply → "empty"', () => {
    expect(errorOf('I think it is Paris.')).toMatch(/JSON/);
    expect(errorOf('')).toBe(EMPTY_REPLY_ERROR);
    expect(errorOf(' \n\t ')).toMatch(/empty/);
  });

  it('§4 standard JSON escapes decode exactly as JSON.parse does', () => {
    const answer = 'quote " backslash \\ slash / \b\f\n\r\t é \u2028 😀 \ud800';
    const reply = envelope(answer, 0.9);
    expect(read(reply).answer).toBe(JSON.parse(reply).answer);
    expect(read('{"answer": "\\u00e9\\uD83D\\uDE00", "confidence": 1}').answer).toBe('é😀');
  });

  it('§4 strict numbers: leading zeros, bare dots and plus signs are invalid', () => {
    for (const confidence of ['01', '.5', '5.', '+1', '1e', '-']) {
      expect(errorOf(`{"answer": "x", "confidence": ${confidence}}`)).toBe(NO_OBJECT_ERROR);
    }
    expect(read('{"answer": "x", "confidence": 5e-1}').confidence).toBe(0.5);
    expect(read('{"answer": "x", "confidence": 0.0}').confidence).toBe(0);
  });

  it('§4 each of the four JSON whitespace characters may stand between any two tokens of an object the reader finds in prose', () => {
    for (const blank of [' ', '\n', '\r', '\t']) {
      const object = ['{', '"answer"', ':', '"x"', ',', '"confidence"', ':', '0.9', ',', '"a"', ':', '[', '1', ',', '{', '}', ']', '}'].join(blank);
      expect(read(`Here: ${object} done`), JSON.stringify(blank)).toMatchObject({ answer: 'x', confidence: 0.9 });
    }
  });

  it('§4 control characters inside strings are invalid JSON', () => {
    expect(errorOf('{"answer": "a\u0001b", "confidence": 0.9}')).toBe(NO_OBJECT_ERROR);
  });

  it('§4 duplicate keys: the last one wins, as in JSON.parse', () => {
    expect(read('{"answer": "a", "answer": "b", "confidence": 0.9}').answer).toBe('b');
  });
});

describe('§4 the format example, a draft or a nested example never wins over the real answer', () => {
  const TEMPLATE = '{"answer":"<answer>","confidence":1.0}';

  it('the format template written before a fenced real answer loses to the fence', () => {
    const reply = `The format is ${TEMPLATE}. Here is mine:\n\`\`\`json\n${envelope('Paris', 0.6)}\n\`\`\``;
    expect(read(reply)).toMatchObject({ answer: 'Paris', confidence: 0.6 });
  });

  it('a draft object first on a line loses to the fenced answer after it', () => {
    const reply = `${envelope('draft', 0.95)} was my first thought; on reflection:\n\`\`\`json\n${envelope('final', 0.7)}\n\`\`\``;
    expect(read(reply).answer).toBe('final');
  });

  it('the last line wins over a fence, and a fence over earlier unfenced objects', () => {
    // A format example in a fence, then the answer the model ends on: the answer is the last line.
    expect(read(`Example format:\n\`\`\`json\n${TEMPLATE}\n\`\`\`\n${envelope('Paris', 0.4)}`)).toMatchObject({ answer: 'Paris', confidence: 0.4 });
    expect(read(`Example: ${envelope('example', 0.9)} then\n${envelope('last line', 0.8)}`).answer).toBe('last line');
    expect(read(`Example: ${envelope('example', 0.9)} then \`\`\`json ${envelope('fenced', 0.7)} \`\`\` done.`).answer).toBe('fenced');
  });

  it('the last line is found whatever ends the lines, \\n, \\r\\n or \\r, and before trailing line ends', () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      for (const trailing of ['', eol, `${eol}${eol} `]) {
        const reply = `Example: ${envelope('example', 0.9)} then${eol}${envelope('last line', 0.8)}${trailing}`;
        expect(read(reply).answer, JSON.stringify([eol, trailing])).toBe('last line');
      }
    }
  });

  it('the fence tag is json in any case, with spaces before it; another language or an open fence is no fence', () => {
    for (const open of ['```json', '```JSON', '``` json', '````Json']) {
      expect(read(`${TEMPLATE} then ${open}\n${envelope('fenced', 0.7)}\n\`\`\``).answer, open).toBe('fenced');
    }
    // Tags one letter off `json` in each place (BSON, NEON and TOON are formats of their own) are other languages too.
    for (const open of ['```jsonc', '```json5', '```js', '```', '```bson', '```jxon', '```jsxn', '```jsox', '```neon', '```toon', '```jsona', '```jsonA', '```jsonz', '```json0', '```json9']) {
      expect(read(`${TEMPLATE} then ${open}\n${envelope('fenced', 0.7)}\n\`\`\``).answer, open).toBe('<answer>');
    }
    expect(read(`${TEMPLATE} then \`\`\`json\n${envelope('unclosed', 0.7)} and more`).answer).toBe('<answer>');
  });

  it("a python fence's closing backticks open no fence", () => {
    const reply = `\`\`\`python\nprint(1)\n\`\`\`\n${envelope('prose', 0.9)} json\n${envelope('later', 0.8)} \`\`\`json\n${envelope('fenced', 0.7)}\n\`\`\``;
    expect(read(reply).answer).toBe('fenced');
    expect(read(`\`\`\`python\n\`\`\`json ${envelope('first', 0.9)} \`\`\``).answer).toBe('first');
  });

  it('a tab between the backticks and the tag is a blank, as a space is', () => {
    expect(read(`{"answer":"<answer>","confidence":1.0} then \`\`\`\t json\n${envelope('fenced', 0.7)}\n\`\`\``).answer).toBe('fenced');
  });

  it('fences pair up once, in order: a closing run followed by json, then another pair, makes no fence', () => {
    // The python block closes with ```json, and ```text opens the next block: no json fence anywhere, so the last line wins.
    const reply = `\`\`\`python\nprint(1)\n\`\`\`json\n${envelope('between', 0.9)}\n\`\`\`text\nx\n\`\`\`\n${envelope('last line', 0.8)}`;
    expect(read(reply).answer).toBe('last line');
  });

  it('an envelope that breaks a rule is not replaced by an example nested inside it', () => {
    const example = envelope('example', 1);
    const reply = `{"ambiguous": false, "answer": "Paris", "example": ${example}, "confidence": "high"}`;
    expect(parseReply(reply)).toEqual({ ok: false, error: '"confidence" must be a number from 0 to 1' });
    expect(parseReply(`Sure: ${reply} done`)).toEqual({ ok: false, error: '"confidence" must be a number from 0 to 1' });
    // A null answer is still the key: the object is the envelope, and what it nests stays an example.
    expect(parseReply(`{"answer": null, "confidence": 0.9, "x": ${example}}`)).toMatchObject({ ok: false, error: expect.stringMatching(/"answer" is missing/) });
    expect(parseReply(`{"confidence": 0.9, "x": ${example}}`)).toMatchObject({ ok: false, error: expect.stringMatching(/"answer" is missing/) });
    // Either key alone makes the object the envelope: an answer without a confidence too.
    expect(parseReply(`{"answer": "draft", "x": ${example}}`)).toMatchObject({ ok: false, error: expect.stringMatching(/"confidence" is missing/) });
  });

  it('a wrapper with neither key still gives way to its envelope, and a later object after the broken envelope is still tried', () => {
    expect(read(`{"result": ${envelope('wrapped', 0.8)}}`).answer).toBe('wrapped');
    expect(read(`{"ambiguous": false, "data": ${envelope('inner', 0.8)}}`).answer).toBe('inner');
    expect(read(`{"answer": "x", "confidence": "high", "e": ${envelope('example', 1)}} {"answer": "retry", "confidence": 0.7}`).answer).toBe('retry');
  });

  it('a passing envelope wins over a fenced object nested inside it', () => {
    const reply = `{"answer": "outer \`\`\`json", "inner": ${envelope('inner', 0.9)}, "note": "\`\`\`", "confidence": 0.8} end`;
    expect(read(`Here: ${reply}`).answer).toBe('outer ```json');
  });

  it('with fences, the error is the first fenced rejection; the whole reply comes before it', () => {
    const reply = `Format: {"answer": "<a>", "confidence": "<0-1>"}\n\`\`\`json\n{"answer": "Paris"}\n\`\`\``;
    expect(errorOf(reply)).toMatch(/"confidence" is missing/);
    const whole = `{"answer": "x", "confidence": 2, "note": "\`\`\`json {\\"answer\\": 1} \`\`\`"}`;
    expect(errorOf(whole)).toMatch(/out of range: 2/);
  });

  // Which fence an object is in is tracked as the scan moves on: these pin where a fence starts and ends.
  it('an object after a fence is not in it: the last line still wins over it', () => {
    const reply = `\`\`\`json\n{"answer": "broken"}\n\`\`\`\n${envelope('after the fence', 0.9)} and then\n${envelope('last line', 0.8)}`;
    expect(read(reply).answer).toBe('last line');
  });

  it("an object in the second fence is fenced too, and wins over an earlier unfenced object when the first fence's object fails", () => {
    const reply = `${envelope('unfenced', 0.8)} \`\`\`json\n{"answer": "broken"}\n\`\`\`\n\`\`\`json\n${envelope('second fence', 0.7)}\n\`\`\` end`;
    expect(read(reply).answer).toBe('second fence');
  });

  it('an object right after the json tag is inside the fence', () => {
    expect(read(`Format: {"answer":"<answer>","confidence":1.0} \`\`\`json${envelope('fenced', 0.6)}\`\`\``).answer).toBe('fenced');
  });

  it("the whole reply's rejection is reported over a fenced object's inside it", () => {
    // Neither key, so what it nests is tried: the `{}` in the fence in its string is fenced, and rejected after it.
    const whole = `{"note": "\`\`\`json {} \`\`\`", "deep": ${'['.repeat(MAX_DEPTH)}${']'.repeat(MAX_DEPTH)}}`;
    expect(errorOf(whole)).toBe(`the JSON object nests ${MAX_DEPTH + 1} levels deep; Booth reads objects at most ${MAX_DEPTH} deep`);
  });

  it("the first reply a fresh process reads finds its fence like any later one", async () => {
    // The reader's state is shared by every reply: what it starts as must read a first reply as it reads the rest.
    vi.resetModules();
    const fresh = await import('../../src/reply/parse.js');
    const reply = `Format: {"answer":"<answer>","confidence":1.0}\n\`\`\`json\n${envelope('fenced', 0.6)}\n\`\`\`\n`;
    expect(fresh.parseReply(reply)).toMatchObject({ ok: true, answer: 'fenced' });
  });

  it('a fenced object right after an unfenced one that passed still wins', () => {
    // The first object's string opens the fence, so the object starting where it ends is inside it.
    const reply = `Here: {"answer": "\`\`\`json", "confidence": 0.9}${envelope('fenced', 0.6)}\`\`\` done`;
    expect(read(reply).answer).toBe('fenced');
  });
});

describe('§4 rules', () => {
  it('§4.r1 answer or confidence missing or null → rejected as missing', () => {
    for (const object of [{ confidence: 0.9 }, { answer: 'x' }, { answer: null, confidence: 0.9 }, { answer: 'x', confidence: null }]) {
      const error = errorOf(JSON.stringify(object));
      expect(error).toMatch(/missing/);
      expect(error).toMatch(/answer/);
      expect(error).toMatch(/confidence/);
    }
  });

  it('§4.r2 an object or array answer is rejected', () => {
    expect(errorOf(envelope({ city: 'Paris' }, 0.9))).toMatch(/answer/);
    expect(errorOf(envelope(['Paris'], 0.9))).toMatch(/answer/);
  });

  it('§4 each broken rule is reported in its own words', () => {
    const needsBoth = 'is missing or null; the object needs both "answer" and "confidence"';
    const notScalar = '"answer" must be a string, number or boolean, not';
    for (const [reply, error] of [
      ['{"confidence": 0.9}', `"answer" ${needsBoth}`],
      ['{"answer": null, "confidence": null}', `"answer" ${needsBoth}`],
      ['{"answer": "x"}', `"confidence" ${needsBoth}`],
      ['{"answer": "x", "confidence": null}', `"confidence" ${needsBoth}`],
      ['{"answer": [], "confidence": 0.9}', `${notScalar} an array`],
      ['{"answer": ["x"], "confidence": 0.9}', `${notScalar} an array`],
      ['{"answer": {}, "confidence": 0.9}', `${notScalar} an object`],
      ['{"answer": {"x": 1}, "confidence": 0.9}', `${notScalar} an object`],
      ['{"answer": "x", "confidence": false}', '"confidence" must be a number, not a boolean'],
      ['{"answer": "x", "confidence": "1e"}', '"confidence" must be a number from 0 to 1'],
      ['{"answer": "x", "confidence": "."}', '"confidence" must be a number from 0 to 1'],
      ['{"answer": "x", "confidence": "+."}', '"confidence" must be a number from 0 to 1'],
      ['{"answer": "x", "confidence": "-.e1"}', '"confidence" must be a number from 0 to 1'],
      ['{"answer": "x", "confidence": []}', '"confidence" must be a number from 0 to 1'],
      ['{"answer": "x", "confidence": 1.5}', '"confidence" is out of range: 1.5, expected 0 to 1'],
      ['{"answer": "x", "confidence": "-0.25"}', '"confidence" is out of range: -0.25, expected 0 to 1'],
      ['{"answer": "x", "confidence": 1e400}', '"confidence" is out of range: not finite, expected 0 to 1'],
      ['{"answer": "x", "confidence": "-1e400"}', '"confidence" is out of range: not finite, expected 0 to 1'],
      ['{"answer": "x", "confidence": 0.9, "ambiguous": "maybe"}', '"ambiguous" must be true or false'],
      ['{"answer": " ", "confidence": 0.9}', '"answer" is empty'],
    ]) {
      expect(parseReply(reply as string), reply).toEqual({ ok: false, error });
    }
  });

  it('§4.r2 a number or boolean answer becomes String(value) [differs: true, not True]', () => {
    expect(read(envelope(42, 0.9)).answer).toBe('42');
    expect(read(envelope(1.5, 0.9)).answer).toBe('1.5');
    expect(read(envelope(true, 0.9)).answer).toBe('true');
    expect(read(envelope(false, 0.9)).answer).toBe('false');
  });

  it('§4.r3 a boolean confidence is rejected', () => {
    expect(errorOf(envelope('x', true))).toMatch(/boolean/);
  });

  it('§4.r4 a numeric string confidence is accepted', () => {
    for (const [text, value] of [
      ['0.5', 0.5],
      [' 0.5 ', 0.5],
      ['+.5', 0.5],
      ['1.', 1],
      ['5e-1', 0.5],
      ['1E0', 1],
      ['-0', -0],
    ] as const) {
      expect(read(envelope('x', text)).confidence).toBe(value);
    }
  });

  it('§4.r4 anything else is rejected, and Number() is never the judge [differs: no underscores, no non-ASCII digits]', () => {
    for (const confidence of ['', ' ', '0x1', '0.5_0', '١', '.', 'Infinity', '1e', '0.5.0', 'half', [0.5], { v: 0.5 }]) {
      expect(errorOf(envelope('x', confidence))).toMatch(/confidence/);
    }
  });

  it('§4.r5 confidence not finite or outside [0, 1] is rejected, never clamped', () => {
    for (const confidence of [1.5, -0.1, '2', '1e400']) {
      expect(errorOf(envelope('x', confidence))).toMatch(/range/);
    }
    expect(errorOf('{"answer": "x", "confidence": 1e400}')).toMatch(/range/);
    expect(read(envelope('x', 1)).confidence).toBe(1);
    expect(read(envelope('x', 0)).confidence).toBe(0);
  });

  it('§4.r6 ambiguous: absent → false, boolean kept, "true"/"false" strings in any case', () => {
    expect(read('{"answer": "x", "confidence": 0.9}').ambiguous).toBe(false);
    expect(read(envelope('x', 0.9, { ambiguous: true })).ambiguous).toBe(true);
    expect(read(envelope('x', 0.9, { ambiguous: ' TRUE ' })).ambiguous).toBe(true);
    expect(read(envelope('x', 0.9, { ambiguous: 'False' })).ambiguous).toBe(false);
  });

  it('§4.r6 any other ambiguous value, null included, is rejected', () => {
    for (const ambiguous of ['yes', 1, 0, [], {}]) {
      expect(errorOf(envelope('x', 0.9, { ambiguous }))).toMatch(/ambiguous/);
    }
    expect(errorOf('{"ambiguous": null, "answer": "x", "confidence": 0.9}')).toMatch(/ambiguous/);
  });

  it('§4.r7 an empty or whitespace answer is rejected unless ambiguous', () => {
    expect(errorOf(envelope('', 0.9))).toMatch(/empty/);
    expect(errorOf(envelope(' \n ', 0.9))).toMatch(/empty/);
    expect(read(envelope('', 0.9, { ambiguous: true })).answer).toBe('');
  });

  it('§4.r8 interpretations: strings kept, other items JSON-encoded, non-arrays → []', () => {
    expect(read(envelope('x', 0.9, { interpretations: ['a', 1, null, { b: 2 }, [3]] })).interpretations).toEqual([
      'a',
      '1',
      'null',
      '{"b":2}',
      '[3]',
    ]);
    expect(read(envelope('x', 0.9, { interpretations: 'a, b' })).interpretations).toEqual([]);
  });

  it('§4.r8 chosen_interpretation: null when absent or null, strings kept, other values JSON-encoded', () => {
    expect(read('{"answer": "x", "confidence": 0.9}').chosenInterpretation).toBeNull();
    expect(read(envelope('x', 0.9, { chosen_interpretation: 'the city' })).chosenInterpretation).toBe('the city');
    expect(read(envelope('x', 0.9, { chosen_interpretation: 0 })).chosenInterpretation).toBe('0');
    expect(read(envelope('x', 0.9, { chosen_interpretation: { a: 1 } })).chosenInterpretation).toBe('{"a":1}');
  });

  it('§4.r9 the decoded object is kept uncoerced, extra keys included', () => {
    const reading = read('{"answer": 42, "confidence": "0.9", "source": "atlas", "ambiguous": "false"}');
    expect(reading.parsed).toEqual({ answer: 42, confidence: '0.9', source: 'atlas', ambiguous: 'false' });
  });

  it('§4.r9 a "__proto__" key stays a plain own property and never reaches a prototype', () => {
    const reading = read('{"__proto__": {"polluted": true}, "answer": "x", "confidence": 0.9}');
    expect(Object.getPrototypeOf(reading.parsed)).toBe(Object.prototype);
    expect(Object.hasOwn(reading.parsed, '__proto__')).toBe(true);
    expect(reading.parsed).toEqual(JSON.parse('{"__proto__": {"polluted": true}, "answer": "x", "confidence": 0.9}'));
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('§4.r9 the decoded object is frozen, so callbacks cannot change what Booth decided on', () => {
    const reading = read('{"answer": "x", "confidence": 0.9, "list": [1, {"a": 1}]}');
    expect(Object.isFrozen(reading.parsed)).toBe(true);
    expect(Object.isFrozen(reading.parsed['list'])).toBe(true);
  });
});

/**
 * readObject judges the object a parseFn returns. Its callers' tests (tests/api/) are not among
 * the reader's mutation tests, so it is pinned here against parseReply of the same object's text.
 */
describe('readObject: an object from a parseFn is judged as a reply holding it would be', () => {
  it('an object that breaks no rule reads as parseReply reads its JSON, frozen all through', () => {
    const object = { answer: 'Paris', confidence: 0.9, ambiguous: 'false', source: { pages: [1, 2] } };
    const reading = readObject(object);
    expect(reading).toEqual(parseReply(JSON.stringify(object)));
    expect(reading.ok && Object.isFrozen(reading.parsed['source'])).toBe(true);
  });

  it('an object that breaks a rule is rejected in the words a reply holding it gets', () => {
    const broken: JsonObject[] = [{ answer: 'Paris', confidence: 2 }, { answer: 'Paris' }, { answer: ' ', confidence: 0.5 }];
    for (const object of broken) {
      expect(readObject(object)).toEqual({ ok: false, error: errorOf(JSON.stringify(object)) });
    }
  });

  it('an object answer is rejected unless anyAnswer is given, as by parseReply', () => {
    const object = { answer: { city: 'Paris' }, confidence: 0.9 };
    expect(readObject(object)).toEqual({ ok: false, error: errorOf(JSON.stringify(object)) });
    const reading = readObject(object, true);
    expect(reading).toEqual(parseReply(JSON.stringify(object), true));
    expect(reading.ok && reading.answer).toEqual({ city: 'Paris' });
  });
});

describe('§4.r4 decimalString', () => {
  it('accepts exactly the documented pattern', () => {
    const pattern = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;
    const samples = ['1', '-1', '+1', '1.', '.1', '1.1', '1e5', '1E-5', '1e+5', '.', '+', 'e5', '1e', '1.1.1', ' 1 ', '1 1', '--1', '0x10', '1_0'];
    for (const sample of samples) {
      expect(decimalString(sample) !== undefined, sample).toBe(pattern.test(sample));
    }
  });
});
