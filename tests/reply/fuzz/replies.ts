import fc from 'fast-check';

/**
 * Replies for the differential tests: envelopes written token by token (so keys can repeat
 * and numbers can be spelt `-0` or `1e400`), wrapped as models wrap them, then damaged
 * byte-wise the way a truncated stream or a careless model damages them.
 */

const json = (value: unknown) => JSON.stringify(value);

const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom('', ' ', '\t\n', 'Paris', 'a "quoted" word', 'line\nbreak', '{"answer": "inner"}', '\ud800', 'é'),
);

/** A JSON number as text, including spellings `JSON.stringify` never writes. */
const numberText = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(json),
  fc.integer({ min: -3, max: 3 }).map(String),
  fc.constantFrom('-0', '0.0', '1e400', '-1e-400', '9E-1', '1e+0', '0.90', '1.0e0', '0.7', '0.69999', '1', '1.5'),
);

const confidenceText = fc.oneof(
  { weight: 4, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map(json) },
  { weight: 2, arbitrary: numberText },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(' 0.9 ', '9E-1', '1e+0', '.5', '5.', '+0.5', '-0', '0x1', '', '0.5_0', '\u0669', 'Infinity', 'NaN', '1e', '.', ' .e1', '0.8\n', '\u00a00.75')
      .map(json),
  },
  { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null', '[]', '{}', '[0.9]') },
);

const answerText = fc.oneof(
  { weight: 5, arbitrary: text.map(json) },
  { weight: 1, arbitrary: numberText },
  { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null', '[]', '{}', '["Paris"]', '{"city": "Paris"}') },
);

const ambiguousText = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('false', 'false', 'true') },
  fc.constantFrom('true', 'false', 'null', '0', '1', '[]'),
  fc.constantFrom('true', ' TRUE ', 'False', '\tfalse\n', 'yes', '', 'truе').map(json),
);

const anyJson = fc.jsonValue({ maxDepth: 2, depthSize: 'xsmall' }).map(json);

const interpretationsText = fc.oneof(
  fc.array(fc.oneof(text.map(json), anyJson), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
  anyJson,
);

type Pair = readonly [string, string];

const fields = {
  ambiguous: ambiguousText,
  interpretations: interpretationsText,
  chosen_interpretation: fc.oneof(text.map(json), anyJson),
  answer: answerText,
  confidence: confidenceText,
};

const envelopeObject = fc
  .oneof(
    // Mostly envelopes with both required keys, so accepted replies are common; sometimes any subset.
    { weight: 4, arbitrary: fc.record(fields, { requiredKeys: ['answer', 'confidence'] }) },
    { weight: 1, arbitrary: fc.record(fields, { requiredKeys: [] }) },
  )
  .chain((present) =>
    fc.tuple(
      fc.constant(Object.entries(present) as Pair[]),
      // Extra and repeated keys: JSON.parse keeps the last of a repeated key.
      fc.array(
        fc.tuple(fc.constantFrom('answer', 'confidence', 'ambiguous', '__proto__', 'note', 'result', 'answe\\u0072'), anyJson),
        { maxLength: 2 },
      ),
      fc.constantFrom('', ' ', '\n  ', '\t'),
    ),
  )
  .map(([pairs, extra, space]) => {
    const members = [...pairs, ...extra].map(([key, value]) => `${key.includes('\\') ? `"${key}"` : json(key)}:${space}${value}`);
    return `{${space}${members.join(`,${space}`)}${space}}`;
  });

/**
 * How models wrap their object: bare, fenced, in prose, wrapped in another object, twice;
 * after the format example or a draft, beside a fence of another language, or with an
 * example nested inside it.
 */
const wrapped = fc
  .tuple(envelopeObject, envelopeObject, fc.integer({ min: 0, max: 13 }))
  .map(([one, two, how]) => {
    switch (how) {
      case 0:
        return one;
      case 1:
        return `\`\`\`json\n${one}\n\`\`\``;
      case 2:
        return `Sure! Here it is: ${one} Hope that helps.`;
      case 3:
        return `{"result": ${one}}`;
      case 4:
        return `${one}\n${two}`;
      case 5:
        return `${one} ${two}`;
      case 6:
        return `\`\`\`json\n${one}\n${two}\n\`\`\``;
      case 8:
        return `Format: ${two}\n\`\`\`json\n${one}\n\`\`\``;
      case 9:
        return `\`\`\`JSON ${one}\`\`\`\n${two}`;
      case 10:
        return `\`\`\`python\n${two}\n\`\`\`\n${one} and \`\`\`jsonc\n${two}\n\`\`\``;
      case 11:
        return one.replace('{', `{"example": ${two}, `);
      case 12:
        return `Draft: ${two} then \`\`\`json\n${one}`;
      case 13:
        return `{"result": ${one.replace('{', `{"example": ${two}, `)}}`;
      default:
        return `  ${one}\r\n\r\n`;
    }
  });

const damage = fc.oneof(
  fc.constantFrom('{', '}', '[', ']', '"', '\\', ',', ':', ' ', '\n', '0', '-', 'e', '.', 'u'),
  fc.constantFrom('\\u', '\\u00', '\\u0041', '\\u72\u0010\u0010', '\\ud800', '\\uDC00', '\\q', '\u0000', '\u0010', '\u001f', '\u007f'),
  fc.constantFrom('\ud800', '\udfff', '\u2028', '\ufeff', 'NaN', 'Infinity', '1e400', '-0', 'true', 'null'),
);

type Edit = { readonly kind: 'insert' | 'delete' | 'replace' | 'truncate'; readonly at: number; readonly text: string };

const edit: fc.Arbitrary<Edit> = fc.record({
  kind: fc.constantFrom('insert', 'insert', 'delete', 'replace', 'truncate'),
  at: fc.nat(),
  text: damage,
});

function apply(reply: string, { kind, at, text: inserted }: Edit): string {
  const i = reply.length === 0 ? 0 : at % (reply.length + 1);
  switch (kind) {
    case 'insert':
      return reply.slice(0, i) + inserted + reply.slice(i);
    case 'delete':
      return reply.slice(0, i) + reply.slice(i + 1);
    case 'replace':
      return reply.slice(0, i) + inserted + reply.slice(i + 1);
    case 'truncate':
      return reply.slice(0, i);
  }
}

/** A reply: often intact (so accepted envelopes are well represented), else with a few edits. */
export const reply: fc.Arbitrary<string> = fc
  .tuple(wrapped, fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 3, arbitrary: fc.array(edit, { minLength: 1, maxLength: 3 }) }))
  .map(([text, edits]) => edits.reduce(apply, text));
