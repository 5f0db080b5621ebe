import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acheck, check, type CheckpointStore, MAX_DEPTH, memoryStore } from '../../src/index.js';
import { fileStore } from '../../src/stores/node.js';
import { JsonObjectReader } from '../../src/reply/json-objects.js';
import { parseReply } from '../../src/reply/parse.js';
import { envelope } from '../fixtures/helpers.js';

/** Bugs found by differential fuzzing against `JSON.parse`; each test is named after one. */

const once = (reply: string) => check(() => reply, 'q', { maxRetries: 0 });
const arrays = (depth: number, inner = '') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;

describe('forged \\u escapes', () => {
  it('raw control characters U+0010–U+0019 are not hex digits: an invalid key never becomes "answer"', () => {
    const reply = '{"answe\\u72\u0010\u0010":"Paris","confidence":0.9}';
    expect(() => JSON.parse(reply)).toThrow(SyntaxError);
    const result = once(reply);
    expect(result.status).toBe('UNCERTAIN');
    expect(result.answer).toBeNull();
  });

  it('an invalid escape in "ambiguous" cannot make a reply AMBIGUOUS', () => {
    const reply = '{"answer":"Paris","confidence":0.9,"ambiguous":"\\u74\u0010\u0010rue"}';
    expect(() => JSON.parse(reply)).toThrow(SyntaxError);
    expect(once(reply).status).toBe('UNCERTAIN');
  });

  it('every code unit below "0" and between the digit and letter ranges is refused in every hex position', () => {
    const notHex = [...Array(0x80).keys()].filter((c) => !/[0-9A-Fa-f]/.test(String.fromCharCode(c)));
    for (const c of notHex) {
      for (let position = 0; position < 4; position += 1) {
        const hex = ['0', '0', '6', '1'];
        hex[position] = String.fromCharCode(c);
        const reply = `{"answer":"\\u${hex.join('')}","confidence":0.9}`;
        expect(parseReply(reply).ok, `code ${c} at ${position}`).toBe(false);
      }
    }
  });

  it('upper- and lower-case hex digits decode as JSON.parse decodes them', () => {
    const reply = '{"answer":"\\u00e9\\u00C9\\uD83D\\ude00","confidence":0.9}';
    expect(once(reply).answer).toBe(JSON.parse(reply).answer);
  });
});

describe('deep interpretations and chosen_interpretation', () => {
  for (const key of ['interpretations', 'chosen_interpretation']) {
    it(`2 200 and 100 000 nested arrays under "${key}" come back as a parse failure, not a RangeError`, async () => {
      for (const depth of [2_200, 100_000]) {
        const reply = `{"ambiguous": true, "${key}": ${arrays(depth)}, "answer": "x", "confidence": 0.9}`;
        const result = once(reply);
        expect(result.status).toBe('UNCERTAIN');
        expect(result.attempts[0]?.error).toMatch(/nests \d+ levels deep/);
        await expect(acheck(async () => reply, 'q', { maxRetries: 0 })).resolves.toMatchObject({ status: 'UNCERTAIN' });
      }
    });

    it(`"${key}" nested up to the limit is still JSON-encoded as the spec says`, () => {
      const value = arrays(MAX_DEPTH - 1);
      const result = once(`{"ambiguous": true, "${key}": ${value}, "answer": "x", "confidence": 0.9}`);
      expect(result.status).toBe('AMBIGUOUS');
      const text = key === 'interpretations' ? result.interpretations[0] : result.attempts[0]?.chosenInterpretation;
      // Each interpretation is one item of the array; chosen_interpretation is the whole value.
      expect(text).toBe(arrays(key === 'interpretations' ? MAX_DEPTH - 2 : MAX_DEPTH - 1));
    });
  }

  it(`an object ${MAX_DEPTH} deep is read; one level more is rejected, naming both depths`, () => {
    expect(parseReply(`{"answer":"x","confidence":0.9,"a":${arrays(MAX_DEPTH - 1)}}`).ok).toBe(true);
    expect(parseReply(`{"answer":"x","confidence":0.9,"a":${arrays(MAX_DEPTH)}}`)).toEqual({
      ok: false,
      error: `the JSON object nests ${MAX_DEPTH + 1} levels deep; Booth reads objects at most ${MAX_DEPTH} deep`,
    });
  });
});

describe('a durable acheck() and deep replies', () => {
  /** Keeps the checkpoint object itself, as a store that does not serialize might. */
  const objectStore = (): CheckpointStore & { saved: unknown[] } => {
    const kept = new Map<string, unknown>();
    const saved: unknown[] = [];
    return {
      saved,
      load: (key) => kept.get(key),
      save: (key, checkpoint) => {
        saved.push(checkpoint);
        kept.set(key, checkpoint);
      },
      delete: (key) => void kept.delete(key),
    };
  };

  it('a reply nesting 2 200 deep anywhere never breaks saving the checkpoint', async () => {
    const deep = `{"answer": "x", "confidence": 0.1, "extra": ${arrays(2_200)}}`;
    const kept = objectStore();
    const stores = [kept, memoryStore(), fileStore(mkdtempSync(join(tmpdir(), 'booth-deep-')))];
    for (const store of stores) {
      const result = await acheck(async (_p, { attempt }) => (attempt === 0 ? deep : envelope('Paris', 0.9)), 'q', {
        checkpoint: store,
        key: 'deep',
      });
      expect(result.status).toBe('REPAIRED');
    }
    expect(kept.saved).toHaveLength(2); // one save per finished attempt
  });

  it(`a checkpoint holding an answer object ${MAX_DEPTH} deep is saved as JSON and resumed`, async () => {
    const deepest = `{"answer": "x", "confidence": 0.1, "extra": ${arrays(MAX_DEPTH - 1)}}`;
    const store = memoryStore();
    const stop = new AbortController();
    const first = acheck(
      async (_p, { attempt }) => {
        if (attempt === 1) stop.abort(new Error('stopped'));
        return deepest;
      },
      'q',
      { checkpoint: store, key: 'k', signal: stop.signal },
    );
    await expect(first).rejects.toThrow('stopped');
    const resumed = await acheck(async () => envelope('Paris', 0.9), 'q', { checkpoint: store, key: 'k' });
    expect(resumed.status).toBe('REPAIRED');
    expect(resumed.attempts[0]?.parsed).toEqual(JSON.parse(deepest));
  });
});

describe('replies of very many objects', () => {
  // Left out of `npm run mutate` (BOOTH_MUTATE): half a minute for every reader mutant it covers.
  it.skipIf(process.env.BOOTH_MUTATE === '1')('more than 16 777 216 objects in one reply do not hit a Map size limit', { timeout: 120_000 }, () => {
    const count = 2 ** 24 + 1;
    const result = once(`${'{}'.repeat(count)}${envelope('last', 0.9)}`);
    expect(result.answer).toBe('last');
  });

  // The scan reuses the row of each object it rejects: these replies check that no id or member set it still needs is lost.
  it('objects rejected one after another leave the first rejection to report and later objects their own members', () => {
    const rejectedFirst = parseReply(`{"answer": "x"} ${'{}'.repeat(100)} {"b": 1} {"confidence": 2}`);
    expect(rejectedFirst).toEqual({ ok: false, error: '"confidence" is missing or null; the object needs both "answer" and "confidence"' });
    const members = parseReply(`{"x": 1} {"answer": "a", "confidence": 2} {"answer": "b", "confidence": 0.8} {"answer": "c"}`);
    expect(members).toMatchObject({ ok: true, answer: 'b', confidence: 0.8 });
    const nested = parseReply(`${'{"a": {"b": {}}} '.repeat(50)}{"a": {"answer": "inner", "confidence": 0.9}} tail`);
    expect(nested).toMatchObject({ ok: true, answer: 'inner', confidence: 0.9 });
  });

  // Every object here holds a chosen key, so each keeps a member set of its own. Under `npm run mutate`
  // (BOOTH_MUTATE) 5 000 deep: Stryker's instrumented reader took more than the 5 s a test may take.
  it('a hundred thousand objects nested under envelope keys are judged each, and the envelope inside is found', () => {
    const depth = process.env.BOOTH_MUTATE === '1' ? 5_000 : 100_000;
    // "ambiguous" is a chosen key but no envelope's own, so each object is judged and the next one in is tried.
    const nested = `${'{"ambiguous": false, "a": '.repeat(depth)}${envelope('inner', 0.9)}${'}'.repeat(depth)}`;
    expect(parseReply(nested)).toMatchObject({ ok: true, answer: 'inner', confidence: 0.9 });
    // Under "answer", the outermost is the envelope gone wrong, and nothing inside it replaces it (the envelope's list adds a level).
    const underAnswer = `${'{"answer": '.repeat(depth)}${envelope('inner', 0.9)}${'}'.repeat(depth)}`;
    expect(parseReply(underAnswer)).toEqual({ ok: false, error: `the JSON object nests ${depth + 2} levels deep; Booth reads objects at most ${MAX_DEPTH} deep` });
    const noEnvelope = `${'{"answer": "x", "confidence": 2, "a": '.repeat(depth)}1${'}'.repeat(depth)}`;
    // The outermost is rejected first, for its depth, and each one inside for its confidence.
    expect(parseReply(noEnvelope)).toEqual({ ok: false, error: `the JSON object nests ${depth} levels deep; Booth reads objects at most ${MAX_DEPTH} deep` });
    expect(parseReply(`${'{"answer": "x", "confidence": 2, "a": '.repeat(100)}1${'}'.repeat(100)}`)).toEqual({ ok: false, error: '"confidence" is out of range: 2, expected 0 to 1' });
  });

  it('a read that fails keeps the members of the objects it closed, and drops those of the ones it left open', () => {
    const inner = '{"answer": "inner", "confidence": 0.9}';
    expect(parseReply(`{"answer": "outer", "confidence": 0.5, "b": ${inner}, `)).toMatchObject({ ok: true, answer: 'inner' });
    expect(parseReply(`{"answer": "x", "b": ${inner.replace('0.9', '2')} ${'{"answer": "x",'.repeat(1000)}`)).toEqual({
      ok: false,
      error: '"confidence" is out of range: 2, expected 0 to 1',
    });
  });

  // A lone member holding a container, true, false or null is kept as a code, not an object (see LONELY_VALUES).
  it('a lone member kept as a code reads as the member itself, and the last of repeated keys wins', () => {
    // Prose first, so the reader judges each object rather than JSON.parse the whole reply.
    const read = (object: string) => parseReply(`Here: ${object}`);
    expect(read('{"answer": {}, "answer": "x", "confidence": 0.9}')).toMatchObject({ ok: true, answer: 'x' });
    expect(read('{"answer": "x", "answer": [], "confidence": 0.9}')).toEqual({
      ok: false,
      error: '"answer" must be a string, number or boolean, not an array',
    });
    expect(read('{"answer": true, "answer": null, "confidence": 0.9}')).toEqual({
      ok: false,
      error: '"answer" is missing or null; the object needs both "answer" and "confidence"',
    });
    expect(read('{"confidence": false, "answer": "x"}')).toEqual({ ok: false, error: '"confidence" must be a number, not a boolean' });
    expect(read('{"ambiguous": true, "answer": "x", "confidence": 0.4}')).toMatchObject({ ok: true, ambiguous: true });
    // Two lone members of different keys: the second must not push out the first.
    expect(read('{"answer": {}, "ambiguous": true, "confidence": 0.5}')).toEqual({
      ok: false,
      error: '"answer" must be a string, number or boolean, not an object',
    });
    expect(read('{"ambiguous": null, "ambiguous": {}, "answer": "x", "confidence": 0.4}')).toEqual({ ok: false, error: '"ambiguous" must be true or false' });
  });

  // A lone string member is a code naming where the string starts, decoded only when asked (see LONE_STRINGS).
  it('a lone string member reads as the string the text holds, escapes decoded, wherever it starts', () => {
    const read = (object: string) => parseReply(`Here: ${object}`);
    expect(read('{"answer": "say \\"hi\\" \\u00e9", "confidence": 0.9}')).toMatchObject({ ok: true, answer: 'say "hi" é' });
    expect(read('{"answer": "x", "answer": "y", "confidence": 0.9}')).toMatchObject({ ok: true, answer: 'y' });
    expect(read('{"answer": "x", "answer": {}, "confidence": 0.9}')).toEqual({
      ok: false,
      error: '"answer" must be a string, number or boolean, not an object',
    });
    expect(read('{"confidence": "0.8", "answer": "x"}')).toMatchObject({ ok: true, confidence: 0.8 });
    expect(read('{"confidence": "high", "answer": "x"}')).toEqual({ ok: false, error: '"confidence" must be a number from 0 to 1' });
    // Lone in every object: the members of the first rejected, far along the reply, make its message.
    const far = `${' '.repeat(3_000_000)}{"answer": "x", "confidence": "2"}`;
    expect(parseReply(`${far}${' {"answer": "x",'.repeat(10_000)}`)).toEqual({ ok: false, error: '"confidence" is out of range: 2, expected 0 to 1' });
    const reader = new JsonObjectReader(['answer', 'confidence', 'ambiguous']);
    const text = `${' '.repeat(5_000_000)}{"ambiguous": "tr\\u0075e"}`;
    reader.reset(text);
    expect({ ...reader.members(reader.read(text.indexOf('{'))) }).toEqual({ ambiguous: 'true' });
    expect(() => new JsonObjectReader(['a', 'b', 'c', 'd'])).toThrow(RangeError);
  });

  it('members are kept apart from Object.prototype: a read-only key or a setter an app put there changes nothing', () => {
    const reply = 'prefix {"b": 1} and {"answer": "A", "confidence": 0.8} trailing';
    const inner: unknown[] = [];
    Object.defineProperty(Object.prototype, 'confidence', { value: 0.5, writable: false, configurable: true });
    Object.defineProperty(Object.prototype, 'answer', {
      configurable: true,
      set(value) {
        // A setter that reads a reply itself must neither see nor spoil the read under way.
        inner.push(parseReply(reply), value);
      },
    });
    let reading: ReturnType<typeof parseReply>;
    try {
      reading = parseReply(reply);
    } finally {
      delete (Object.prototype as Record<string, unknown>)['confidence'];
      delete (Object.prototype as Record<string, unknown>)['answer'];
    }
    expect(reading).toMatchObject({ ok: true, answer: 'A', confidence: 0.8 });
    expect(inner).toEqual([]);
  });

  it('a chosen key "__proto__" is a plain member', () => {
    const reader = new JsonObjectReader(['answer', '__proto__']);
    reader.reset('{"__proto__": 1, "answer": "x"}');
    const members = reader.members(reader.read(0));
    expect(Object.hasOwn(members, '__proto__')).toBe(true);
    expect({ ...members }).toEqual(JSON.parse('{"__proto__": 1, "answer": "x"}'));
  });

  // Arrays opened back to back share one row of the reader's stack: their depths must still add up, level by level.
  it('arrays opened back to back count one level each, closed together or one by one, with or without spaces', () => {
    const envelopeAfter = (value: string) => parseReply(`{"a": ${value}, "answer": "x", "confidence": 0.9}`);
    expect(envelopeAfter(arrays(MAX_DEPTH - 1))).toMatchObject({ ok: true, answer: 'x' });
    const tooDeep = { ok: false, error: `the JSON object nests ${MAX_DEPTH + 1} levels deep; Booth reads objects at most ${MAX_DEPTH} deep` };
    expect(envelopeAfter(arrays(MAX_DEPTH))).toEqual(tooDeep);
    expect(envelopeAfter(`[${arrays(MAX_DEPTH - 1, '1')}, [2]]`)).toEqual(tooDeep);
    expect(envelopeAfter(`[[], [${arrays(MAX_DEPTH - 2)}], 3]`)).toEqual(tooDeep);
    expect(envelopeAfter(`[ ${arrays(MAX_DEPTH - 1)} , [[ [ ]]]]`)).toEqual(tooDeep);
    expect(envelopeAfter(`[ ${arrays(MAX_DEPTH - 2)} , [[ [ ]]]]`)).toMatchObject({ ok: true });
    expect(envelopeAfter(`[[[1], [[2, [3]]]], []]`)).toMatchObject({ ok: true, parsed: { a: [[[1], [[2, [3]]]], []] } });
    expect(parseReply(`{"answer": [[[]], [[{"b": 1}]]], "confidence": 0.9}`, true)).toMatchObject({ ok: true, answer: [[[]], [[{ b: 1 }]]] });
    expect(parseReply(`{"a": [[[[1] x {"answer": "inner", "confidence": 0.9}]]]}`)).toMatchObject({ ok: true, answer: 'inner' });
  });

  it('a one-line reply read as its own last line is the same object, found or rejected', () => {
    expect(parseReply(`{"a": ${arrays(2_000)}} {"answer": "later", "confidence": 0.9} x`)).toMatchObject({ ok: true, answer: 'later' });
    const deep = { ok: false, error: `the JSON object nests 2001 levels deep; Booth reads objects at most ${MAX_DEPTH} deep` };
    expect(parseReply(`{"a": ${arrays(2_000)}}`)).toEqual(deep);
    expect(parseReply(`{"answer": ${arrays(2_000)}, "confidence": 0.9}`)).toEqual(deep);
    expect(parseReply(`{"answer": ${arrays(2)}, "confidence": 0.9}`)).toEqual({ ok: false, error: '"answer" must be a string, number or boolean, not an array' });
  });

  // Rows are made as objects open, in start order; a memo of every position is made only once a read starts before an object already read.
  it('an object read once is known by its start to every later read: in order, out of order, and after a read inside a string', () => {
    const text = '{"s": "{", "x": {"answer": 1, "y": {}}, "z": {"answer": 2}} {"answer": 3, "w": {"a": [';
    const at = (needle: string) => text.indexOf(needle);
    const reader = new JsonObjectReader(['answer']);
    reader.reset(text);
    const outer = reader.read(0);
    expect(reader.end(outer)).toBe(at(' {"answer": 3'));
    const nested = ['{"answer": 1', '{}', '{"answer": 2'].map((needle) => reader.read(at(needle)));
    expect(nested.map((id) => ({ ...reader.members(id) }))).toEqual([{ answer: 1 }, {}, { answer: 2 }]);
    expect(nested.map((id) => reader.depth(id))).toEqual([2, 1, 1]);
    expect(reader.read(at('{"answer": 1'))).toBe(nested[0]);
    expect(reader.end(reader.read(0))).toBe(reader.end(outer));
    // The `{` inside "{" opens nothing that closes; the objects after it are still known, by the memo now.
    expect(reader.read(at('{", "x"'))).toBe(-1);
    expect(reader.read(at('{}'))).toBe(nested[1]);
    expect(reader.read(at('{"answer": 2'))).toBe(nested[2]);
    // A read that fails: the object it left open fails from its own start too.
    expect(reader.read(at('{"answer": 3'))).toBe(-1);
    expect(reader.read(at('{"a": ['))).toBe(-1);

    // The same reply read in order, without a read inside the string: no memo, the same answers.
    reader.reset(text);
    expect(reader.read(0)).toBe(outer);
    expect(['{"answer": 1', '{}', '{"answer": 2'].map((needle) => reader.read(at(needle)))).toEqual(nested);
    expect(reader.read(at('{"answer": 3'))).toBe(-1);
    expect(reader.read(at('{"a": ['))).toBe(-1);
  });
});

describe('the memo made once a read starts inside a string', () => {
  // Each reply below makes the memo: the scan reads the `{` inside "{" after the object around it.
  const answer = { ok: true, answer: 'A', confidence: 0.5, ambiguous: false, interpretations: [], chosenInterpretation: null };

  it('an object a failed read left open is a failure in the memo, not an object', () => {
    expect(parseReply('{"s": "{", "n": {"m": x}}')).toEqual({ ok: false, error: 'no JSON object was found in the reply' });
  });

  it('an object nested in one read after the memo is made is found by its own id', () => {
    expect(parseReply('{"s": "{", "t": {}} {"x": {"answer": "A", "confidence": 0.5}}')).toMatchObject(answer);
  });

  it('forgetting an object in a page of the memo with no mark yet', () => {
    const reply = `{"s": "{", "a": {}}${' '.repeat(5_000)}{"b": 1} {"answer": "A", "confidence": 0.5}`;
    expect(parseReply(reply)).toMatchObject(answer);
  });

  it('a read with `again` after the memo is made is known there again, by the same id', () => {
    const text = '{"s": "{", "x": {}} {"a": {"b": {}}}';
    const reader = new JsonObjectReader(['answer']);
    reader.reset(text);
    reader.read(0);
    expect(reader.read(text.indexOf('"{"') + 1)).toBe(-1);
    const at = text.indexOf('{"a"');
    const id = reader.read(at, true);
    expect(reader.read(at)).toBe(id);
    expect(reader.end(id)).toBe(text.length);
  });

  it('an array left open by a failed read marks nothing', () => {
    const text = '{"s": "{", "x": {}} {"a": [1, x';
    const reader = new JsonObjectReader(['answer']);
    reader.reset(text);
    const outer = reader.read(0);
    reader.read(text.indexOf('"{"') + 1);
    expect(reader.read(text.indexOf('{"a"'))).toBe(-1);
    expect(reader.read(0)).toBe(outer);
  });

  it('objects read out of start order are still known by their start', () => {
    // The read inside "{" is a valid object, `{", ": 1}`, starting before the `{}` read already.
    const text = '{"s": "{", ": 1}": {}}';
    const reader = new JsonObjectReader(['answer']);
    reader.reset(text);
    reader.read(0);
    const inner = reader.read(text.indexOf('{}'));
    expect(reader.end(reader.read(text.indexOf('"{"') + 1))).toBe(text.indexOf('}"') + 1);
    expect(reader.read(text.indexOf('{}'))).toBe(inner);
  });

  it('a read where the latest object starts is that object, and a read that fails keeps no row', () => {
    // Without the memo: the scan meets a whole-span candidate again, and is not to read it twice.
    const text = '{"answer": "x"} {"a": x} {}';
    const reader = new JsonObjectReader(['answer']);
    reader.reset(text);
    const first = reader.read(0, true);
    expect(reader.read(0)).toBe(first);
    expect(reader.read(text.indexOf('{"a"'))).toBe(-1);
    // A reply of failures side by side keeps nothing: the next object takes the row after the first.
    expect(reader.read(text.indexOf('{}'))).toBe(first + 1);
  });

  it('`{}` and `{ }`, read without a decode, are objects one deep with no members, known again by their start', () => {
    const text = '{"s": "{"} {} {\n } {"a": {}}';
    const reader = new JsonObjectReader(['answer']);
    reader.reset(text);
    const empty = [text.indexOf('{}'), text.indexOf('{\n')].map((at) => reader.read(at, true));
    expect(empty.map((id) => [reader.start(id), reader.end(id), reader.depth(id), reader.members(id)])).toEqual([
      [text.indexOf('{}'), text.indexOf('{}') + 2, 1, {}],
      [text.indexOf('{\n'), text.indexOf('{\n') + 4, 1, {}],
    ]);
    // Read again after the memo is made, they are the same objects.
    expect(reader.read(text.indexOf('"{"') + 1)).toBe(-1);
    expect([text.indexOf('{}'), text.indexOf('{\n')].map((at) => reader.read(at))).toEqual(empty);
    expect(parseReply(`${text} {"answer": "x", "confidence": 0.9}`)).toMatchObject({ ok: true, answer: 'x' });
  });

  it('forgetting the last object, whose members are not the last set kept, leaves the set of the object before it', () => {
    // Rows are in start order, sets in the order chosen keys are met: the inner object is the last row, the outer's set the last set.
    expect(parseReply('{"x": {"answer": "n"}, "answer": "o"}')).toEqual({
      ok: false,
      error: '"confidence" is missing or null; the object needs both "answer" and "confidence"',
    });
  });

  it('a forgotten object leaves no mark to mislead a read that meets it later', () => {
    const text = '{"s": "{", "t": {}} {"u": {"v": 1}} {"w": 2}';
    const reader = new JsonObjectReader(['answer']);
    reader.reset(text);
    reader.read(0);
    reader.read(text.indexOf('"{"') + 1);
    const v = reader.read(text.indexOf('{"v"'), true);
    reader.forget(v);
    reader.read(text.indexOf('{"w"'));
    expect(reader.end(reader.read(text.indexOf('{"u"')))).toBe(text.indexOf(' {"w"'));
  });
});

describe('the wording of docs/api.md says what the reader does', () => {
  it('two objects on separate lines: the last line wins', () => {
    expect(once(`${envelope('first', 0.9)}\n${envelope('second', 0.9)}`).answer).toBe('second');
  });

  it('in a fenced reply the last line is the fence, so the first object that passes wins', () => {
    const reply = `\`\`\`json\n${envelope('first', 0.9)}\n${envelope('second', 0.9)}\n\`\`\``;
    expect(once(reply).answer).toBe('first');
  });

  it('"ambiguous" may be a string reading true or false once trimmed, in any case', () => {
    for (const [word, ambiguous] of [[' TRUE ', true], ['\tFalse\n', false], ['tRuE', true]] as const) {
      const result = once(`{"ambiguous": ${JSON.stringify(word)}, "answer": "x", "confidence": 0.9}`);
      expect(result.status, word).toBe(ambiguous ? 'AMBIGUOUS' : 'VERIFIED');
    }
    expect(once('{"ambiguous": "yes", "answer": "x", "confidence": 0.9}').attempts[0]?.error).toMatch(/ambiguous/);
  });
});

/**
 * Gaps a mutation run of the reader found (`npx stryker run tests/config/stryker.reader.config.mjs`): each
 * test pins a behaviour that a mutant of src/reply/json-objects.ts or src/reply/parse.ts changed without
 * any other test noticing.
 */
describe('what the mutation run found untested', () => {
  it('a reader asked to keep too many keys says how many it keeps and how many it got', () => {
    expect(() => new JsonObjectReader(['a', 'b', 'c', 'd'])).toThrow('A JsonObjectReader keeps at most 3 keys, got 4.');
  });

  it('`{}` read with `again` after the memo is made is known there again, by the same id', () => {
    const text = '{"s": "{", "x": {}} {}';
    const reader = new JsonObjectReader(['answer']);
    reader.reset(text);
    reader.read(0);
    // Inside the string "{", before the `{}` already read: this read makes the memo.
    expect(reader.read(text.indexOf('"{"') + 1)).toBe(-1);
    const at = text.lastIndexOf('{}');
    const id = reader.read(at, true);
    expect(reader.read(at)).toBe(id);
    expect([reader.start(id), reader.end(id)]).toEqual([at, text.length]);
  });

  it('an object read again after many later ones is found among their rows by its start, under the id it had', () => {
    // Eight rows without the memo: a read before the latest object's start searches them for its own row.
    const text = Array.from({ length: 8 }, (_, k) => `{"k": ${k}}`).join(' ');
    const reader = new JsonObjectReader(['answer']);
    reader.reset(text);
    const starts = [...text.matchAll(/\{/g)].map((match) => match.index);
    const ids = starts.map((at) => reader.read(at));
    expect(ids).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(starts.map((at) => reader.read(at))).toEqual(ids);
    expect([...starts].reverse().map((at) => reader.read(at))).toEqual([...ids].reverse());
  });

  it('a number with no digits, a broken literal or a broken escape ends nothing: the object holding it fails, wherever the text before it could resume', () => {
    // After `{}`, position 1 holds a `}` that would close the object if the failed number pointed the read back there.
    expect(parseReply('{} {"answer": "x", "confidence": 0.9, "z": -}')).toEqual({
      ok: false,
      error: '"answer" is missing or null; the object needs both "answer" and "confidence"',
    });
    expect(parseReply('{} {"answer": "x", "confidence": 0.9, "z": 1e}')).toMatchObject({ ok: false });
    // A broken literal likewise, and a string with a broken escape.
    for (const broken of ['nul', 'tru', 'fals', '"\\u12x4"', '"\\q"']) {
      expect(parseReply(`{} {"answer": "x", "confidence": 0.9, "z": ${broken}}`), broken).toEqual({
        ok: false,
        error: '"answer" is missing or null; the object needs both "answer" and "confidence"',
      });
    }
  });

  it('an object around one the memo knows failed fails too, in the reader and in a reply', () => {
    const text = '{"s": "{", "t": {}} {"a": {"b": x}}';
    const reader = new JsonObjectReader(['answer']);
    reader.reset(text);
    reader.read(0);
    expect(reader.read(text.indexOf('"{"') + 1)).toBe(-1);
    // Failed where it starts, read with `again`: the memo says so, and the object around it meets that mark.
    expect(reader.read(text.indexOf('{"b"'), true)).toBe(-1);
    expect(reader.read(text.indexOf('{"a"'))).toBe(-1);
    // The reply's last line is read first and fails; the object around it, read next, fails on meeting it.
    expect(parseReply('Here: {"answer": "x", "confidence": 0.9, "a":\n{"b": x}}')).toEqual({ ok: false, error: 'no JSON object was found in the reply' });
  });
});
