import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, constants, createReadStream, openSync, existsSync, lstatSync, readdirSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envelope } from '../fixtures/helpers.js';
import { batchFiles, booth, dir, resultsIn, spawnBooth, useProvider } from '../fixtures/booth-process.js';

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

/** A FIFO (named pipe) at a fresh path, made by mkfifo(1): Node has no call for it. */
function fifo(): string {
  const path = join(dir(), 'pipe');
  execFileSync('mkfifo', [path]);
  return path;
}

describe('booth: --schema and -o on files that are not regular', () => {
  const schemaCases = (): Array<[string, string, string]> => {
    const big = join(dir(), 'big.schema.json');
    writeFileSync(big, '');
    truncateSync(big, 2 * 1024 * 1024 + 1); // sparse: 2 MiB of NULs, no disk used
    return [
      ['a FIFO (which hung)', fifo(), 'it is a FIFO (named pipe), not a regular file; give the path of a file.'],
      ...(existsSync('/dev/zero') ? [['/dev/zero (which aborted with std::bad_alloc)', '/dev/zero', 'it is a character device, not a regular file; give the path of a file.'] as [string, string, string]] : []),
      ['a folder', dir(), 'it is a folder, not a regular file; give the path of a file.'],
      ['a file over 1 MiB', big, `it holds ${2 * 1024 * 1024 + 1} bytes or more, over the 1 MiB such a file may hold; check the path.`],
    ];
  };

  it('a --schema that is not a regular file of at most 1 MiB is bad usage at once, for ask, batch and worker, before any call', async () => {
    for (const [what, path, problem] of schemaCases()) {
      const { input, output } = batchFiles(2);
      for (const args of [
        ['ask', 'q', ...server.endpoint, '--schema', path],
        ['batch', input, '-o', output, ...server.endpoint, '--schema', path],
        // Read before Redis is touched: the address need not answer.
        ['worker', '--queue', 'redis://127.0.0.1:1/0', '--name', 'r', ...server.endpoint, '--schema', path],
      ]) {
        const run = await booth(args, (child) => {
          if (child.exitCode === null) setTimeout(() => child.kill('SIGKILL'), 20_000).unref();
        });
        expect(run.signal, `${what}: ${args[0]}`).toBeNull();
        expect(run.code, `${what}: ${args[0]}: ${run.stderr}`).toBe(2);
        expect(run.stderr, `${what}: ${args[0]}`).toContain(`error: cannot read the schema file ${path} (--schema): ${problem}`);
        expect(run.stderr).not.toMatch(/bad_alloc|heap|Aborted/);
      }
    }
    expect(server.provider.received).toHaveLength(0);
  }, 120_000);

  it('a --system-file that is not a regular file of at most 1 MiB is bad usage at once, before any call (a FIFO hung)', async () => {
    for (const [what, path, problem] of schemaCases()) {
      const run = await booth(['ask', 'q', ...server.endpoint, '--system-file', path], (child) => {
        if (child.exitCode === null) setTimeout(() => child.kill('SIGKILL'), 20_000).unref();
      });
      expect(run.signal, what).toBeNull();
      expect(run.code, `${what}: ${run.stderr}`).toBe(2);
      expect(run.stderr, what).toContain(`error: cannot read the system prompt file ${path} (--system-file): ${problem}`);
    }
    expect(server.provider.received).toHaveLength(0);
  }, 120_000);

  it('-o on a FIFO that no process reads ends the batch at once with exit 1 and the fix, before any call (it blocked, deaf to Ctrl-C)', async () => {
    const { input } = batchFiles(2);
    const output = fifo();
    const run = await booth(['batch', input, '-o', output, ...server.endpoint], (child) => {
      if (child.exitCode === null) setTimeout(() => child.kill('SIGKILL'), 20_000).unref();
    });
    expect(run.signal).toBeNull();
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: cannot write the results file ${output} (-o): it is a FIFO (named pipe) that no process is reading; start its reader first, or give -o a regular file.\n`);
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);

  it('-o on a FIFO with a reader still works: the reader gets every result line', async () => {
    server.provider.fallback = () => ({ text: envelope('42', 0.9) });
    const { input } = batchFiles(3);
    const output = fifo();
    // A reader is there before booth starts: this non-blocking descriptor, held until the stream's
    // own (blocking) open returns, which it does once booth opens the FIFO to write.
    const held = openSync(output, constants.O_RDONLY | constants.O_NONBLOCK);
    let read = '';
    const reader = createReadStream(output, 'utf8');
    reader.on('open', () => closeSync(held));
    reader.on('data', (chunk) => (read += chunk));
    const ended = new Promise<void>((resolve) => reader.on('close', () => resolve()));
    const run = await booth(['batch', input, '-o', output, ...server.endpoint]);
    await ended;
    expect(run.code, run.stderr).toBe(0);
    expect(read.trim().split('\n').map((line) => (JSON.parse(line) as { id: number }).id).sort()).toEqual([0, 1, 2]);
  }, 30_000);
});
