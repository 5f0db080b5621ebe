import { describe, expect, it } from 'vitest';
import { RerunCheck, type RunRecord, RunChangedError } from '../../src/cli/batch/run-record.js';
import { quotedText, terminalText } from '../../src/util/values.js';

/** What a terminal acts on, or what reorders a line: none may reach stderr raw. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('quotedText: a string from outside as a message shows it', () => {
  it('escapes ESC, BEL, C1 controls and bidi marks, overrides and isolates as \\uXXXX', () => {
    const hostile = '\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eevil\u202c\u2066x\u2069\u200e\u200f\u2028';
    const shown = quotedText(hostile, 200);
    expect(shown).not.toMatch(UNSAFE);
    expect(shown).toBe('"\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eevil\\u202c\\u2066x\\u2069\\u200e\\u200f\\u2028"');
    // Unescaped by JSON.parse, it is the value again.
    expect(JSON.parse(shown)).toBe(hostile);
    expect(quotedText('gpt-4o "mini"')).toBe('"gpt-4o \\"mini\\""');
  });

  it('cuts a long value to at most max characters, never inside a surrogate pair or an escape', () => {
    expect(quotedText('m'.repeat(500), 80)).toBe(`"${'m'.repeat(77)}…"`);
    // 77 characters fit between the quotes before the ellipsis: a pair starting at the 77th would be split by a plain cut.
    const paired = quotedText(`${'m'.repeat(76)}😀😀`, 80);
    expect(paired).toBe(`"${'m'.repeat(76)}…"`);
    expect(paired.length).toBeLessThanOrEqual(80);
    const escaped = quotedText(`${'m'.repeat(72)}\u202e${'m'.repeat(10)}`, 80);
    expect(escaped).toBe(`"${'m'.repeat(72)}…"`);
    // A lone surrogate is escaped as JSON.stringify escapes it, and kept whole.
    expect(quotedText('a\ud800b')).toBe('"a\\ud800b"');
    expect(quotedText('x'.repeat(78), 80)).toBe(`"${'x'.repeat(78)}"`);
  });
});

describe('terminalText: model text as a terminal line shows it', () => {
  it('escapes every C0 and C1 control, DEL, bidi mark and line separator, and leaves the rest as it is', () => {
    const hostile = '\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eevil\u202c\u2066x\u2069\u200e\u200f\u2028\u2029\u007f\r\n\tend';
    const shown = terminalText(hostile);
    expect(shown).not.toMatch(UNSAFE);
    expect(shown).toBe('\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eevil\\u202c\\u2066x\\u2069\\u200e\\u200f\\u2028\\u2029\\u007f\\r\\n\\tend');
    // Unquoted and whole: quotes, backslashes, accents and emoji are not touched, and nothing is cut.
    expect(terminalText('Mercury "the planet" \\ é 😀')).toBe('Mercury "the planet" \\ é 😀');
    expect(terminalText('m'.repeat(5_000))).toHaveLength(5_000);
  });

  it('keeps a line of JSON the same JSON', () => {
    const value = { reading: '\u009b2J\u202eledom', answer: 'a\u001bb' };
    const line = JSON.stringify(value);
    expect(JSON.parse(terminalText(line))).toEqual(value);
    expect(terminalText(line)).not.toMatch(UNSAFE);
  });
});

describe("a rerun's refusal shows the earlier line's model through quotedText", () => {
  const run: RunRecord = { booth: '1.0.0', model: 'test-model', host: '127.0.0.1:1', schema: null, system: null, temperature: null, seed: null };
  const refusal = (model: string): string => {
    const check = new RerunCheck({ baseUrl: 'http://127.0.0.1:1/v1', model: 'test-model', threshold: 0.7, maxRetries: 1, samples: 1 }, run, false);
    check.redo({ id: 1, run: { ...run, model } }, 'out.jsonl:1');
    try {
      check.finish('out.jsonl', () => undefined);
    } catch (error) {
      expect(error).toBeInstanceOf(RunChangedError);
      return (error as Error).message;
    }
    throw new Error('the rerun was not refused');
  };

  it('lets no C1 control or bidi override through, and cuts without splitting a surrogate pair', () => {
    const message = refusal('\u009b2J\u202eledom');
    expect(message).not.toMatch(UNSAFE);
    expect(message).toContain('--model "\\u009b2J\\u202eledom" → "test-model"');
    const long = refusal(`${'m'.repeat(76)}😀${'m'.repeat(20)}`);
    expect(long).toContain(`--model "${'m'.repeat(76)}…" → "test-model"`);
    expect(long).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});
