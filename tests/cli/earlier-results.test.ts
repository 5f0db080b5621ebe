import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEarlierResults } from '../../src/cli/batch/input.js';

describe('the lines an earlier run left in the output', () => {
  it('a line that is JSON but no object (null, a number, an array) is dropped with a warning, as a cut line is, not a crash', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'booth-earlier-')), 'results.jsonl');
    const kept = JSON.stringify({ id: 'a', status: 'VERIFIED', method: 'confidence', answer: 'x', confidence: 0.9 });
    writeFileSync(file, ['null', kept, '42', '[1,2]', '"text"'].join('\n') + '\n');
    const warnings: string[] = [];
    const earlier = readEarlierResults(file, true, new Set(['a', 'b']), (message) => warnings.push(message));
    expect([...earlier.done]).toEqual(['a']);
    expect(warnings).toEqual([1, 3, 4, 5].map((line) => `${file}:${line}: not a result line (not a JSON object); dropped`));
    // The output is rewritten without them, so the next run does not warn again.
    expect(readFileSync(file, 'utf8')).toBe(`${kept}\n`);
  });
});
