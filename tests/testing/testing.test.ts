import { describe, expect, it, vi } from 'vitest';
import { acheck, check, type Validator } from '../../src/index.js';
import { envelope, scriptedModel } from '../../src/testing/index.js';

describe('boothjs/testing', () => {
  it('envelope() writes the five keys in the order Booth asks for', () => {
    expect(envelope('Paris', 0.9)).toBe('{"ambiguous":false,"interpretations":[],"chosen_interpretation":null,"answer":"Paris","confidence":0.9}');
    expect(JSON.parse(envelope('', 0.5, { ambiguous: true, interpretations: ['a', 'b'], chosen_interpretation: 'a' }))).toMatchObject({
      ambiguous: true,
      interpretations: ['a', 'b'],
      chosen_interpretation: 'a',
    });
  });

  it('scriptedModel answers from its list, throws, returns non-strings, and records every prompt', () => {
    const boom = new Error('boom');
    const model = scriptedModel(['first', { throws: boom }, { returns: 42 }]);
    expect(model.sync('p1')).toBe('first');
    expect(() => model.sync('p2')).toThrow(boom);
    expect(model.sync('p3')).toBe(42);
    expect(() => model.sync('p4')).toThrow(/no step for call 4/);
    expect(model.prompts).toEqual(['p1', 'p2', 'p3', 'p4']);
  });

  it('the async face waits for per-step and global delays', async () => {
    vi.useFakeTimers();
    try {
      const model = scriptedModel([{ delayMs: 100, then: 'late' }], { delayMs: 50 });
      let answer: string | undefined;
      void model.async('p').then((a) => (answer = a));
      await vi.advanceTimersByTimeAsync(149);
      expect(answer).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      expect(answer).toBe('late');
    } finally {
      vi.useRealTimers();
    }
  });

  it('tests a validator without a network, as docs/testing.md shows', async () => {
    const onlyYears: Validator = (answer) => /^\d{4}$/.test(answer) || [false, 'answer with the year only'];
    const model = scriptedModel([envelope('November 1989', 0.9), envelope('1989', 0.9)]);
    const result = check(model.sync, 'When did the Berlin Wall fall?', { validator: onlyYears });
    expect(result.status).toBe('REPAIRED');
    expect(model.prompts[1]).toContain('answer with the year only');
    const again = await acheck(scriptedModel([envelope('1989', 0.9)]).async, 'q', { validator: onlyYears });
    expect(again.status).toBe('VERIFIED');
  });
});
