import { describe, expect, it } from 'vitest';
import { acheck } from '../../src/index.js';
import { envelope } from '../fixtures/helpers.js';

describe('concurrency', () => {
  it('1 000 simultaneous acheck() calls with random delays each get their own result', async () => {
    const count = 1_000;
    const delay = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
    const callFn = async (prompt: string, { attempt }: { attempt: number }) => {
      const id = /question (\d+)\b/.exec(prompt)?.[1];
      await delay();
      // Every third question needs a reconsideration, so runs interleave across attempts.
      if (Number(id) % 3 === 0 && attempt === 0) return envelope(`answer ${id}`, 0.1);
      return envelope(`answer ${id}`, 0.9);
    };
    const results = await Promise.all(
      Array.from({ length: count }, (_, i) => acheck(callFn, `question ${i}`, { onAttempt: () => delay() })),
    );
    results.forEach((result, i) => {
      expect(result.answer).toBe(`answer ${i}`);
      expect(result.status).toBe(i % 3 === 0 ? 'REPAIRED' : 'VERIFIED');
      expect(result.attempts.every((a) => a.answer === `answer ${i}`)).toBe(true);
    });
  });
});
