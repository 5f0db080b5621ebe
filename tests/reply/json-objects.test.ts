import { describe, expect, it } from 'vitest';
import { freezeDeep, isObjectText, type JsonObject, JsonObjectReader, type JsonValue } from '../../src/reply/json-objects.js';

/**
 * The JSON reader of src/reply/json-objects.ts on its own, against JSON.parse: where each
 * object ends, how deep it nests and what it holds under the chosen keys, whatever order
 * the objects are read in. parse.test.ts and reader-regressions.test.ts judge it through
 * parseReply; these pin what parseReply alone cannot see.
 */

/** What JSON.parse reads from the `{` at `start`: the shortest slice that parses, or null when none does. */
function parsedFrom(text: string, start: number): { end: number; value: JsonObject } | null {
  for (let end = start + 2; end <= text.length; end += 1) {
    if (text[end - 1] !== '}') continue;
    try {
      return { end, value: JSON.parse(text.slice(start, end)) as JsonObject };
    } catch {
      // Not this `}`: a later one may close it.
    }
  }
  return null;
}

const depthOf = (value: JsonValue): number =>
  typeof value === 'object' && value !== null ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0;

/** The chosen members as the reader keeps them: an object or array stands in as an empty one. */
const chosen = (value: JsonObject, keys: readonly string[]) =>
  Object.fromEntries(
    keys.filter((key) => Object.hasOwn(value, key)).map((key) => [key, Array.isArray(value[key]) ? [] : typeof value[key] === 'object' && value[key] !== null ? {} : value[key]]),
  );

const opens = (text: string) => [...text].flatMap((c, i) => (c === '{' ? [i] : []));

/** What the reader says of the object it reads at `start`, or null when it reads none (-1; any other id is looked up). */
const described = (reader: JsonObjectReader, start: number, again = false) => {
  const id = reader.read(start, again);
  return id === -1 ? null : { start: reader.start(id), end: reader.end(id), depth: reader.depth(id), members: { ...reader.members(id) } };
};

const expected = (text: string, start: number, keys: readonly string[]) => {
  const found = parsedFrom(text, start);
  return found === null ? null : { start, end: found.end, depth: depthOf(found.value), members: chosen(found.value, keys) };
};

const KEYS = ['answer', 'confidence', 'ambiguous'];

/** Replies that reach each corner of the reader: nesting, strings holding braces, failures, lone members, escapes. */
const TEXTS = [
  '{"answer": "x", "confidence": 0.9}',
  'x}{"a":"\u0001"} {"answer": "y"}',
  '{"s": "{", "x": {"answer": 1, "y": {}}, "z": {"answer": 2}} {"answer": 3, "w": {"a": [',
  '{"a": [[[{"answer": true}]], [{"confidence": [1]}]], "b": {"c": {"d": {}}}} {"answer": null, "answer": "z"}',
  '{"answer": {"answer": {"ambiguous": false}, "confidence": [[]]}, "confidence": "0.5", "ambiguous": "tr\\u0075e"}',
  '{"s": "{\\"answer\\": 1}", "t": {"\\u0061nswer": "\\u00e9", "n": -0.5e+3}} {"a": 1e5, "b": [true, false, null]}',
  '{"x": {"answer": "n"}, "answer": "o"} {} { } {"k": [{}, {"j": {}}]}',
  '{"a": {"b": x}} {"c": [1, {"d": 2}, 3} {"e": {"f": "unterminated',
  '{"answer": 1, "confidence": 2, "ambiguous": 3, "answer": [4], "confidence": {}, "ambiguous": true}',
  '{"answer": [], "confidence": {}} {"answer": [[]], "b": [{}, []]}',
  // Keys must be strings, and only whole keys are chosen.
  '{"x": {a": 1}} {"y": 1, b": 2} {"answers": 1, "answe": 2, "confidence": null}',
  // Six objects open at once, each with a chosen key: more than the reader's first table of notes holds.
  '{"answer": 1, "x": {"answer": 2, "x": {"answer": 3, "x": {"answer": 4, "x": {"answer": 5, "x": {"answer": null}}}}}}',
  // Whitespace of every kind between tokens, and every hex digit's edge in escapes.
  '{\t"answer"\n:\r"\\u0A9f\\uFa09"\r\n,\t"confidence" :\n[ 1 ,\t2 ]\n}',
  // Arrays opened back to back, in objects and around them.
  '{"a": [[[{"b": [[1]]}]], [[]]], "c": {"d": [[[]], [[[2]]]]}} [[{"e": [[3], [[4]]]}]]',
];

describe('each read gives the object JSON.parse reads from that `{`, with its end, depth and chosen members', () => {
  for (const [n, text] of TEXTS.entries()) {
    it(`text ${n}: read in order, in reverse, and again after reading inside strings`, () => {
      const reader = new JsonObjectReader(KEYS);
      const want = opens(text).map((start) => expected(text, start, KEYS));
      reader.reset(text);
      expect(opens(text).map((start) => described(reader, start))).toEqual(want);
      // Every object is known now; read again, each is the same one.
      expect(opens(text).map((start) => described(reader, start))).toEqual(want);
      // Last to first: every read starts before the ones already read, so the reader keeps a memo from the first.
      reader.reset(text);
      expect(
        opens(text)
          .reverse()
          .map((start) => described(reader, start, true)),
      ).toEqual([...want].reverse());
      expect(opens(text).map((start) => described(reader, start))).toEqual(want);
    });

    it(`text ${n}: an object read with \`again\` is known by the same id to every later read`, () => {
      const reader = new JsonObjectReader(KEYS);
      reader.reset(text);
      const ids = opens(text)
        .reverse()
        .map((start) => reader.read(start, true))
        .reverse();
      expect(opens(text).map((start) => reader.read(start))).toEqual(ids);
      // Ids are handed out in the order objects open, one per object: no two starts share one.
      const kept = ids.filter((id) => id >= 0);
      expect(new Set(kept).size).toBe(kept.length);
    });
  }
});

describe('a string ends only at its closing quote, and breaks the object holding it otherwise', () => {
  // `x}` first: were a broken string's end taken as position 1, the `}` there would close the object.
  it('a raw control character inside the string', () => {
    const reader = new JsonObjectReader(KEYS);
    reader.reset('x}{"a":"\u0001"}');
    expect(reader.read(2)).toBe(-1);
  });

  it('no closing quote before the text ends', () => {
    const reader = new JsonObjectReader(KEYS);
    reader.reset('x}{"a":"abc');
    expect(reader.read(2)).toBe(-1);
    reader.reset('x}{"abc');
    expect(reader.read(2)).toBe(-1);
  });
});

describe('a key is a whole, closed string followed by a colon', () => {
  // `x1}` first: were a broken key's value taken to start at position 1, `1}` would complete the object.
  it('an unterminated key, or one without its colon, breaks the object', () => {
    const reader = new JsonObjectReader(KEYS);
    reader.reset('x1}{"abc');
    expect(reader.read(3)).toBe(-1);
    reader.reset('x1}{"a" 2}');
    expect(reader.read(3)).toBe(-1);
    // A key not in quotes, in an object nested one deep: `1}}` would close both.
    reader.reset('x1}}{"b": {a');
    expect(reader.read(4)).toBe(-1);
  });

  it('isObjectText refuses the same keys, and a key not in quotes', () => {
    expect(isObjectText('{"x": {a": 1}}', 0, 14, 64)).toBe(false);
    expect(isObjectText('{"a" 11}', 0, 8, 64)).toBe(false);
    for (const [text, at] of [
      ['x1}{"abc', 3],
      ['x1}{"a" 2}', 3],
      ['x1}{a', 3],
      ['x:2}{"abc', 4],
      ['x}{"a":tru', 2],
    ] as const) {
      expect(isObjectText(text, at, at, 64), text).toBe(false);
      expect(isObjectText(text, at, text.length, 64), text).toBe(false);
    }
  });
});

describe('the memo keeps what is read after it is made', () => {
  it('an object nested in one read after the memo is made is known by its id, the one after its parent', () => {
    // Reading the `{}` at 0 after the object at 3 makes the memo.
    const text = '{} {"a": 1} {"b": {"c": 2}}';
    const reader = new JsonObjectReader(KEYS);
    reader.reset(text);
    reader.read(3);
    reader.read(0);
    const outer = reader.read(text.indexOf('{"b"'));
    expect(reader.read(text.indexOf('{"c"'))).toBe(outer + 1);
  });

  it('arrays closed in a later read leave the marks of objects read before it', () => {
    const text = '{"a": 1} {"b": 2} {"c": [[1], 2, [[]]]}';
    const reader = new JsonObjectReader(KEYS);
    reader.reset(text);
    const second = reader.read(9);
    const first = reader.read(0, true);
    reader.read(18);
    expect([reader.read(0), reader.read(9)]).toEqual([first, second]);
  });
});

describe('isObjectText: exactly one object, every container closed by its own closer', () => {
  it('an array closed by `}` or an object by `]` is no object', () => {
    expect(isObjectText('{"a":1]', 0, 7, 64)).toBe(false);
    // Nor is anything that does not start with `{`, however valid.
    expect(['[1]', '1', '"s"', '[]'].map((text) => isObjectText(text, 0, text.length, 64))).toEqual([false, false, false, false]);
    expect(isObjectText('{"a":[1}', 0, 8, 64)).toBe(false);
    expect(isObjectText('{"a":[1]]', 0, 9, 64)).toBe(false);
    expect(isObjectText('{"a":[1],"b":{}}', 0, 16, 64)).toBe(true);
  });
});

describe('one reader serves reply after reply', () => {
  it('after a reply that grew its tables large, the next reply is read as a fresh reader reads it', () => {
    const reader = new JsonObjectReader(KEYS);
    // More than 4 096 objects, open containers and notes at once: every table grows past its small size.
    const large = `${'{"answer": ['.repeat(5_000)}${']}'.repeat(5_000)}`;
    reader.reset(large);
    expect(reader.end(reader.read(0))).toBe(large.length);
    for (const text of TEXTS) {
      const fresh = new JsonObjectReader(KEYS);
      fresh.reset(text);
      reader.reset(text);
      expect(opens(text).map((start) => described(reader, start))).toEqual(opens(text).map((start) => described(fresh, start)));
    }
  });
});

describe('forget', () => {
  it('forgetting the latest object gives its id to the next object read, and leaves the others as they were', () => {
    const text = '{"answer": 1, "confidence": 2} {"b": 1} {"c": 2}';
    const reader = new JsonObjectReader(KEYS);
    reader.reset(text);
    const first = reader.read(0);
    const second = reader.read(text.indexOf('{"b"'));
    reader.forget(second);
    expect(reader.read(text.indexOf('{"c"'))).toBe(second);
    expect(reader.end(second)).toBe(text.length);
    expect({ ...reader.members(first) }).toEqual({ answer: 1, confidence: 2 });
  });

  it('forgetting the first object read, id 0, gives its id to the next one', () => {
    const reader = new JsonObjectReader(KEYS);
    reader.reset('{"a": 1} {"b": 2}');
    reader.forget(reader.read(0));
    expect(reader.read(9)).toBe(0);
  });

  it('forgetting no object (-1), or one that is not the latest, changes nothing', () => {
    const text = '{"a": 1} {"b": 2} {"c": 3}';
    const reader = new JsonObjectReader(KEYS);
    reader.reset(text);
    reader.forget(-1);
    const first = reader.read(0);
    const second = reader.read(9);
    reader.forget(-1);
    reader.forget(first);
    expect(reader.read(18)).toBe(second + 1);
    expect([reader.read(0), reader.read(9)]).toEqual([first, second]);
  });
});

describe('freezeDeep', () => {
  it('freezes the value and everything in it, and nothing it only inherits', () => {
    const inherited = { x: 1 };
    Object.defineProperty(Object.prototype, 'inheritedByAll', { value: inherited, enumerable: true, configurable: true, writable: true });
    let value: JsonObject;
    try {
      value = freezeDeep(JSON.parse('{"a": [1, {"b": [[]]}], "c": {"d": "s"}}') as JsonObject);
    } finally {
      delete (Object.prototype as Record<string, unknown>)['inheritedByAll'];
    }
    expect(Object.isFrozen(inherited)).toBe(false);
    const a = value['a'] as readonly JsonValue[];
    expect([value, a, a[1], (a[1] as JsonObject)['b'], ((a[1] as JsonObject)['b'] as JsonValue[])[0], value['c']].every((item) => Object.isFrozen(item))).toBe(true);
  });
});

describe('rows kept: a failed read leaves nothing to read twice, and keeps no row it need not', () => {
  it('a failed read keeps no row, unless asked to read there again', () => {
    const text = '{"a": x} {"b": 1}';
    const reader = new JsonObjectReader(KEYS);
    reader.reset(text);
    expect(reader.read(0)).toBe(-1);
    expect(reader.read(9)).toBe(0);
    reader.reset(text);
    expect(reader.read(0, true)).toBe(-1);
    expect(reader.read(9)).toBe(1);
    // Kept, it is known to fail: read again, it opens no row.
    expect(reader.read(0)).toBe(-1);
    expect(reader.read(0, true)).toBe(-1);
  });

  it('a `{` that opens nothing takes no row, even read with `again`', () => {
    const reader = new JsonObjectReader(KEYS);
    reader.reset('{x} {[} {"b": 1}');
    expect([reader.read(0, true), reader.read(4, true), reader.read(8)]).toEqual([-1, -1, 0]);
  });

  it('a failed read keeps the rows and members of the objects it closed before failing', () => {
    const text = '{"a": {"answer": "in", "confidence": 1}, "c": x} {"d": 1}';
    const reader = new JsonObjectReader(KEYS);
    reader.reset(text);
    expect(reader.read(0)).toBe(-1);
    const inner = reader.read(text.indexOf('{"answer"'));
    expect({ ...reader.members(inner) }).toEqual({ answer: 'in', confidence: 1 });
    // The failed object kept its row for the one it closed: the next object comes after both.
    expect(reader.read(text.indexOf('{"d"'))).toBe(2);
  });

  it('objects a failed read left open are known to fail, and reading them again opens no rows', () => {
    // The read inside "{" comes after the object around it: from then on the reader keeps a memo.
    const text = '{"s": "{", "t": {}} {"a": {"b": {"c": x}}} {"d": 1}';
    const at = (needle: string) => text.indexOf(needle);
    const reader = new JsonObjectReader(KEYS);
    reader.reset(text);
    expect(reader.read(0)).toBe(0);
    expect(reader.read(at('{", "t"'))).toBe(-1);
    expect(reader.read(at('{"a"'))).toBe(-1);
    expect([reader.read(at('{"b"')), reader.read(at('{"c"')), reader.read(at('{"a"'))]).toEqual([-1, -1, -1]);
    // Rows: the first object and the `{}` in it, then a, b and c, which the first failed read opened.
    expect(reader.read(at('{"d"'))).toBe(5);
  });
});

describe('forget keeps the member sets of the objects it does not forget', () => {
  const keys = ['a', 'b'];

  it('forgetting a nested object whose set is not the last one kept leaves the outer object its own', () => {
    // The inner object's set is made first; the outer's, at its second key, after.
    const text = '{"x": {"a": 1, "b": 2}, "a": 3, "b": 4}';
    const reader = new JsonObjectReader(keys);
    reader.reset(text);
    const outer = reader.read(0);
    const inner = reader.read(text.indexOf('{"a"'));
    reader.forget(inner);
    expect({ ...reader.members(outer) }).toEqual({ a: 3, b: 4 });
  });

  it('forgetting an object with no members leaves every set as it was', () => {
    for (const [text, order] of [
      // Ids 0 to 4 in start order; the fifth, forgotten, has none.
      ['{}{"a": 1, "b": 2, "c": {"a": 3, "b": 4}} {} {}', [0, 2, 42, 45]],
      // Read out of order: the `{}` at 0 comes third, and the fourth object, forgotten, has none.
      ['{} {"a": 1, "b": 2, "c": {"a": 3, "b": 4}} {"d": 5}', [3, 0, 43]],
    ] as const) {
      const reader = new JsonObjectReader(keys);
      reader.reset(text);
      const ids = order.map((start) => reader.read(start, true));
      const sets = opens(text).map((start) => ({ ...reader.members(reader.read(start)) }));
      reader.forget(ids.at(-1)!);
      expect(opens(text).map((start) => ({ ...reader.members(reader.read(start)) }))).toEqual(sets);
      expect(sets.filter((set) => Object.keys(set).length === 2)).toEqual([{ a: 1, b: 2 }, { a: 3, b: 4 }]);
    }
  });
});

describe('reading one object over and over', () => {
  it('after the memo is made, an object read again and again without `again` is read each time, however many times', () => {
    // Each read without `again` takes a row of its own: past 4 096 rows the table grows to what the whole text can need, and beyond.
    const text = '{"s": "{", "t": {}} {"answer": 1}';
    const at = text.indexOf('{"answer"');
    const reader = new JsonObjectReader(KEYS);
    reader.reset(text);
    reader.read(0);
    reader.read(text.indexOf('{", "t"'));
    const ends = new Set<number>();
    const members = new Set<string>();
    for (let k = 0; k < 5_000; k += 1) {
      const id = reader.read(at);
      ends.add(reader.end(id));
      members.add(JSON.stringify(reader.members(id)));
    }
    expect([...ends]).toEqual([text.length]);
    expect([...members]).toEqual(['{"answer":1}']);
  });
});
