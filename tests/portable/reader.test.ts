// A core test for every runtime: vitest and the built package only (see tests/portable/README.md).
import { describe, expect, it } from 'vitest';
import { check, MAX_DEPTH, PARSE_RETRY_MARKER, REPAIRED, UNCERTAIN, VERIFIED } from 'boothjs';
import { envelope, scriptedModel } from 'boothjs/testing';

/** What the reader makes of one reply, with no retry to hide it. */
const readOnce = (reply: string) => check(() => reply, 'Capital of France?', { maxRetries: 0 }).attempts[0]!;

describe('the reply reader', () => {
  it('reads a reply that is exactly the envelope', () => {
    const attempt = readOnce(envelope('Paris', 0.9));
    expect(attempt.parseOk).toBe(true);
    expect(attempt.answer).toBe('Paris');
    expect(attempt.confidence).toBe(0.9);
    expect(attempt.parsed).toMatchObject({ answer: 'Paris', confidence: 0.9, ambiguous: false });
  });

  it('finds the envelope in prose around it', () => {
    const attempt = readOnce(`Sure! Here is my answer: ${envelope('Paris', 0.9)} I hope this helps.`);
    expect(attempt.parseOk).toBe(true);
    expect(attempt.answer).toBe('Paris');
  });

  it('finds the envelope in a ```json fence, whatever the tag\'s case', () => {
    for (const tag of ['json', 'JSON']) {
      const attempt = readOnce(`Let me think.\n\n\`\`\`${tag}\n${envelope('Paris', 0.85)}\n\`\`\`\nDone.`);
      expect(attempt.parseOk).toBe(true);
      expect(attempt.answer).toBe('Paris');
      expect(attempt.confidence).toBe(0.85);
    }
  });

  it('takes the last line over an example or a draft before it', () => {
    const reply = `For example: ${envelope('EXAMPLE', 0.1)}\nMy answer:\n${envelope('Paris', 0.9)}`;
    expect(readOnce(reply).answer).toBe('Paris');
  });

  it('finds the envelope wrapped in another object', () => {
    const attempt = readOnce(JSON.stringify({ result: JSON.parse(envelope('Paris', 0.9)) }));
    expect(attempt.parseOk).toBe(true);
    expect(attempt.answer).toBe('Paris');
  });

  it('reads a number or boolean answer as text, and a decimal string confidence', () => {
    expect(readOnce(envelope(42, 0.9)).answer).toBe('42');
    expect(readOnce(envelope(true, 0.9)).answer).toBe('true');
    expect(readOnce(envelope('Paris', '0.8')).confidence).toBe(0.8);
  });

  it('reads ambiguous as a boolean or as "true" in any case, trimmed', () => {
    const reply = JSON.stringify({ ambiguous: ' TRUE ', interpretations: ['a', 'b'], chosen_interpretation: 'a', answer: 'x', confidence: 0.5 });
    const result = check(() => reply, 'q');
    expect(result.status).toBe('AMBIGUOUS');
    expect(result.interpretations).toEqual(['a', 'b']);
  });

  it('refuses what breaks the rules, saying why', () => {
    const refused: Array<[string, string]> = [
      ['no JSON at all', 'no JSON object was found in the reply'],
      [envelope({ city: 'Paris' }, 0.9), '"answer" must be a string, number or boolean, not an object'],
      [envelope('Paris', true), '"confidence" must be a number, not a boolean'],
      [envelope('Paris', 1.5), '"confidence" is out of range: 1.5, expected 0 to 1'],
      [envelope('Paris', null), '"confidence" is missing or null'],
      [envelope('   ', 0.9), '"answer" is empty'],
      // Only standard JSON counts.
      ['{"answer": "Paris", "confidence": NaN}', 'no JSON object was found in the reply'],
      ["{'answer': 'Paris', 'confidence': 0.9}", 'no JSON object was found in the reply'],
      ['{"answer": "Paris", "confidence": 0.9,}', 'no JSON object was found in the reply'],
    ];
    for (const [reply, reason] of refused) {
      const attempt = readOnce(reply);
      expect(attempt.parseOk).toBe(false);
      expect(attempt.answer).toBeNull();
      expect(attempt.error).toContain(reason);
    }
  });

  it('never clamps a confidence out of range into an accepted one', () => {
    const result = check(() => envelope('Paris', 1.01), 'q', { maxRetries: 0 });
    expect(result.status).toBe(UNCERTAIN);
    expect(result.confidence).toBeNull();
  });

  it('an unparseable reply is retried with the reason, never with the reply', () => {
    const model = scriptedModel(['<html>502 Bad Gateway SECRET-TOKEN</html>', envelope('Paris', 0.9)]);
    const result = check(model.sync, 'Capital of France?');
    expect(result.status).toBe(REPAIRED);
    expect(result.method).toBe('confidence');
    expect(result.attempts[0]?.parseOk).toBe(false);
    expect(result.attempts[0]?.rawText).toBe('<html>502 Bad Gateway SECRET-TOKEN</html>');
    expect(model.prompts[1]).toContain(PARSE_RETRY_MARKER);
    expect(model.prompts[1]).not.toContain('SECRET-TOKEN');
  });

  it('unparseable on every attempt is UNCERTAIN by parse_failure', () => {
    const result = check(scriptedModel(['nope', '{"answer": }']).sync, 'q');
    expect(result.status).toBe(UNCERTAIN);
    expect(result.method).toBe('parse_failure');
    expect(result.allParseFailed).toBe(true);
  });

  it(`an object nested deeper than MAX_DEPTH (${MAX_DEPTH}) is refused, and an envelope beside it is still found`, () => {
    const deep = `${'['.repeat(MAX_DEPTH + 10)}${']'.repeat(MAX_DEPTH + 10)}`;
    const tooDeep = readOnce(`{"answer": "Paris", "confidence": 0.9, "extra": ${deep}}`);
    expect(tooDeep.parseOk).toBe(false);
    expect(tooDeep.error).toContain(String(MAX_DEPTH));
    const beside = check(() => `${deep}\n${envelope('Paris', 0.9)}`, 'q');
    expect(beside.status).toBe(VERIFIED);
  });

  it('reads a megabyte of braces and prose without a stack overflow', () => {
    const noise = '{'.repeat(200_000) + ' prose '.repeat(100_000);
    const result = check(() => `${noise}\n${envelope('Paris', 0.9)}`, 'q');
    expect(result.status).toBe(VERIFIED);
    expect(result.answer).toBe('Paris');
  });

  it('a "__proto__" key in the reply stays a plain property', () => {
    const attempt = readOnce('{"__proto__": {"polluted": true}, "answer": "Paris", "confidence": 0.9}');
    expect(attempt.parseOk).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.keys(attempt.parsed ?? {})).toContain('__proto__');
  });
});
