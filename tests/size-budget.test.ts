import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `npm run size` (.ci/size.mjs) is itself tested: over a budget by one byte it fails naming the
 * entry, Booth's size and the budget; at the measured size it passes; so with what dist/ keeps
 * more than src/ (`chunkOverhead`); a budgeted entry missing from the budget file fails. It
 * bundles the built package, so dist/ must be built first, as `npm test` and .ci/run do.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCRIPT = join(ROOT, '.ci/size.mjs');
const BUDGETED = ['check', 'acheck+adapters'];

interface Size {
  readonly minified: number;
  readonly gzip: number;
}

let work: string;
beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/index.js'))) throw new Error('dist/ is missing: run `npm run build` before this test');
  work = mkdtempSync(join(tmpdir(), 'booth-size-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs the script with this budget; its exit code and output. */
async function size(budget: Readonly<Record<string, Size | number>>): Promise<{ code: number; stdout: string; stderr: string }> {
  const file = join(work, `budget-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(budget));
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [SCRIPT, '--budget', file], { cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

/** Booth's part of an entry as the script printed it: the `Booth` line under `<entry>:`. */
function measured(stdout: string, entry: string): Size {
  const block = stdout.slice(stdout.indexOf(`${entry}: `));
  const match = /^ {2}Booth +([\d,]+) B min +([\d,]+) B gz/m.exec(block);
  if (!match?.[1] || !match[2]) throw new Error(`no Booth line for ${entry} in:\n${stdout}`);
  return { minified: Number(match[1].replaceAll(',', '')), gzip: Number(match[2].replaceAll(',', '')) };
}

/** What the bundle of an entry from dist/ keeps more than from src/, as the script printed it. */
function overhead(stdout: string, entry: string): number {
  const block = stdout.slice(stdout.indexOf(`${entry}: `));
  const match = /^ {2}from src\/ .*\(dist\/ keeps (-?[\d,]+) B more\)$/m.exec(block);
  if (!match?.[1]) throw new Error(`no from src/ line for ${entry} in:\n${stdout}`);
  return Number(match[1].replaceAll(',', ''));
}

const bytes = (n: number) => `${n.toLocaleString('en-US')} B`;

/** The lines of the script's stderr but its warnings, which it shows without failing. */
const problems = (stderr: string) => stderr.split('\n').filter((line) => line !== '' && !line.startsWith('size: warning'));

describe('the size budget', () => {
  it('fails one byte over a budget or over chunkOverhead, naming the entry, the size and the limit, and passes at the measured sizes', async () => {
    const roomy = await size({ ...Object.fromEntries(BUDGETED.map((entry) => [entry, { minified: 1e9, gzip: 1e9 }])), chunkOverhead: 1e9 });
    expect(problems(roomy.stderr)).toEqual([]);
    expect(roomy.code).toBe(0);
    const sizes = { ...Object.fromEntries(BUDGETED.map((entry) => [entry, measured(roomy.stdout, entry)])), chunkOverhead: 1e9 };
    const check = measured(roomy.stdout, 'check');
    const acheck = measured(roomy.stdout, 'acheck+adapters');
    const overheads = BUDGETED.map((entry) => overhead(roomy.stdout, entry));

    const exact = await size({ ...sizes, chunkOverhead: Math.max(...overheads) });
    expect(exact.code).toBe(0);
    expect(exact.stdout).toContain('size: every budgeted entry is within');

    const minifiedOver = await size({ ...sizes, check: { ...check, minified: check.minified - 1 } });
    expect(minifiedOver.code).toBe(1);
    expect(problems(minifiedOver.stderr)).toEqual([
      expect.stringMatching(
        new RegExp(`^size: check: Booth's part is ${bytes(check.minified)} minified, above its budget of ${check.minified - 1} B \\(.*budget-\\w+\\.json\\)$`),
      ),
    ]);

    const gzipOver = await size({ ...sizes, 'acheck+adapters': { ...acheck, gzip: 1 } });
    expect(gzipOver.code).toBe(1);
    expect(gzipOver.stderr).toContain(`size: acheck+adapters: Booth's part is ${bytes(acheck.gzip)} gzip, above its budget of 1 B`);

    const checkOverhead = overhead(roomy.stdout, 'check');
    const kept = await size({ ...sizes, chunkOverhead: checkOverhead - 1 });
    expect(kept.code).toBe(1);
    expect(kept.stderr).toContain(
      `size: check: bundled from dist/, Booth's part keeps ${bytes(checkOverhead)} minified more than bundled from src/, above the ${checkOverhead - 1} B allowed`,
    );
  }, 120_000);

  it('fails when a budgeted entry has no budget, so a misspelt name cannot switch the check off', async () => {
    const { code, stderr } = await size({ 'acheck+adapters': { minified: 1e9, gzip: 1e9 }, chek: { minified: 1e9, gzip: 1e9 }, chunkOverhead: 1e9 });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^size: check has no budget in .*budget-\w+\.json$/m);
  }, 60_000);
});
