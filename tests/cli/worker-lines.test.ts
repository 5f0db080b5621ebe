import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonInSlices } from '../../src/cli/queue/worker.js';
import { longestStall } from '../fixtures/event-loop.js';

/**
 * Issue 24, item 4: a queue worker renews its job locks from timers, so it must not hold the
 * event loop for long while it writes a result line, which with samples carries every reply
 * (20 replies of 2 MB make 130 MB of JSON, seconds of JSON.stringify in one stretch).
 */

describe('a queue worker writes a long result line in slices', () => {
  it('the same bytes as JSON.stringify, for any JSON data (undefined members, holes, nulls, nesting)', async () => {
    const data = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom(undefined, Number.NaN, -0, Infinity, '\u2028', '\ud800', [, 1], Object.create(null) as object),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 4 }), tie('value'), { maxKeys: 4 }),
        fc.date({ noInvalidDate: true }),
      ),
    })).value;
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.array(data, { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 4 }), data, { maxKeys: 4 })), async (value) => {
        expect((await jsonInSlices(value, 0)).toString()).toBe(JSON.stringify(value));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a cycle, as JSON.stringify does', async () => {
    const row: Record<string, unknown> = { a: [1] };
    (row['a'] as unknown[]).push(row);
    await expect(jsonInSlices(row)).rejects.toThrow(TypeError);
  });

  it('a line of 20 samples of 2 MB (about 130 MB of JSON) never holds the event loop for long', async () => {
    const prose = 'lorem ipsum dolor sit amet, '.repeat(Math.ceil((2 << 20) / 28));
    const samples = Array.from({ length: 20 }, (_, i) => ({ rawText: `${prose} ${i}`, answer: `${prose} ${i}`, confidence: 0.9 }));
    const row = { id: 0, attempts: [{ samples, clusters: samples.map((s, i) => ({ answer: s.answer, count: 1, samples: [i] })) }] };
    const { stallMs, value } = await longestStall(() => jsonInSlices(row));
    expect((value as Buffer).equals(Buffer.from(JSON.stringify(row)))).toBe(true);
    // A slice is 10 ms of work; half a second leaves room for a machine shared with other test runs.
    expect(stallMs).toBeLessThan(500);
  }, 60_000);
});
