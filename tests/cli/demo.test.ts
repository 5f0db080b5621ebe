import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDemo } from '../../src/cli/demo.js';

describe('npm run demo', () => {
  it('shows every status, with answers, attempts and traces', async () => {
    const lines: string[] = [];
    const results = await runDemo((line) => lines.push(line));
    expect(results.map((r) => r.status)).toEqual(['VERIFIED', 'REPAIRED', 'AMBIGUOUS', 'UNCERTAIN', 'REPAIRED', 'BLOCKED']);
    const output = lines.join('\n');
    for (const status of ['VERIFIED', 'REPAIRED', 'AMBIGUOUS', 'UNCERTAIN', 'BLOCKED']) expect(output).toContain(`status      ${status}`);
    expect(output).toContain('readings    Mercury the planet | mercury the element | Freddie Mercury');
    expect(output).toContain('failed validation: answer with the year only');
    // Counted from 1, as everything the CLI prints.
    expect(output).toContain('    attempt 1 of 2: "1991" at confidence 0.45\n    attempt 2 of 2: "1990" at confidence 0.9\n');
    expect(output).toContain('trace       calling → parsing → ambiguityGate → confidenceGate → verified');
    expect(output).toMatch(/never that the answer is true/);
  });

  it('writes the HTML trace of each run to the folder it names', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'booth-demo-'));
    const lines: string[] = [];
    await runDemo((line) => lines.push(line), dir);
    const files = readdirSync(dir).sort();
    expect(files).toEqual(['1-verified.html', '2-repaired.html', '3-ambiguous.html', '4-uncertain.html', '5-repaired.html', '6-blocked.html']);
    expect(readFileSync(join(dir, '6-blocked.html'), 'utf8')).toContain('>BLOCKED</h1>');
    expect(lines.join('\n')).toContain(`Open the HTML traces in ${dir}`);
  });

  it('invents no token counts: the scripted model reports no usage, so results and pages show none, not zeros', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'booth-demo-'));
    const results = await runDemo(() => {}, dir);
    expect(results.map((r) => r.usage)).toEqual(results.map(() => null));
    for (const file of readdirSync(dir)) expect(readFileSync(join(dir, file), 'utf8')).not.toMatch(/data-name="tokens"|<th>tokens/);
  });

  it('repairs after a low-confidence reply and after a validator failure', async () => {
    const results = await runDemo(() => {});
    expect(results[1]?.attempts.map((a) => a.confidence)).toEqual([0.45, 0.9]);
    expect(results[4]?.attempts.map((a) => a.passedValidation)).toEqual([false, true]);
    expect(results[3]?.method).toBe('parse_failure');
  });
});
