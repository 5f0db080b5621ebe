import { lstatSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envelope } from './helpers.js';
import { batchFiles, booth, dir, resultsIn, spawnBooth, useProvider } from './fixtures/booth-process.js';

/**
 * `booth` and the files an attacker sharing a folder (or writing the command's input) can
 * prepare: a symlink planted where the batch writes its temporary file, and the special
 * files (FIFOs, devices) named as the schema or the output. Real processes, real files.
 */

const server = useProvider();

describe('booth batch: the rewrite of the output after a killed run', () => {
  it('a symlink planted at the old temporary name (<output>.<pid>.tmp) is not written through: the victim is untouched and the output stays a regular file with its permissions', async () => {
    server.provider.fallback = () => ({ text: envelope('42', 0.9) });
    const { input, output } = batchFiles(3);
    const first = await booth(['batch', input, '-o', output, ...server.endpoint]);
    expect(first.code).toBe(0);
    // As a kill mid-line leaves it: the last line cut short, so the rerun rewrites the file without it.
    const whole = readFileSync(output, 'utf8');
    writeFileSync(output, whole.slice(0, whole.length - 10));
    chmodSync(output, 0o600);
    const folder = join(output, '..');
    const victim = join(dir(), 'victim.txt');
    writeFileSync(victim, 'precious\n');

    const rerun = spawnBooth(['batch', input, '-o', output, ...server.endpoint]);
    // The name main wrote to was `${output}.${pid}.tmp`: known as soon as the process exists,
    // long before it has loaded enough to read its output.
    symlinkSync(victim, `${output}.${rerun.child.pid}.tmp`);
    const run = await rerun.done;

    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('an unfinished result line; its question is checked again');
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(lstatSync(output).isFile()).toBe(true);
    expect(statSync(output).mode & 0o777).toBe(0o600);
    expect(resultsIn(output).map((r) => r.id).sort()).toEqual([0, 1, 2]);
    // The planted link is left as it was, and no temporary file of ours is left behind.
    expect(readdirSync(folder).sort()).toEqual(['questions.jsonl', 'results.jsonl', `results.jsonl.${rerun.child.pid}.tmp`]);
    expect(lstatSync(`${output}.${rerun.child.pid}.tmp`).isSymbolicLink()).toBe(true);
  }, 60_000);
});
