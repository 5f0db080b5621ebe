import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { available as chromiumAvailable } from '../fixtures/chromium.js';
import { bundlePortableTests, PORTABLE } from './bundle.js';
import { binaryPath, RUNNERS, summary } from './runners.js';

/**
 * The same tests/portable files that vitest runs in Node, run from one bundle of the built
 * package in Deno, Bun, Cloudflare's workerd and Chromium: each runtime must run every test
 * vitest finds there, by name, and pass it. Elsewhere than CI a runtime that is not installed
 * (`bash tests/runtimes/install.sh`, which `npm test` runs; Debian's chromium) is skipped; in CI it fails.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const VISUALIZE = 'visualize.test.ts > pictures of';
/**
 * src/visualize/index.ts (dotToSvg, under toSvg and toHtml): @viz-js/viz compiles Graphviz's
 * WebAssembly from bytes at run time, which workerd refuses as code generation. docs/runtimes.md
 * says so: in a Worker, draw with toMermaid, toDot or toSequence.
 */
const WASM_REFUSED = 'Wasm code generation disallowed by embedder';
/**
 * Booth's own failures, each test's name with a part of its error: what a runtime cannot do. These fail and nothing else
 * does: a new failure fails this file, and so does one of these once it passes, so that it is
 * taken off the list.
 */
const KNOWN_FAILURES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  workerd: {
    [`${VISUALIZE} a run > toHtml() is one self-contained page with the status, the answer and the diagram as <svg>`]: WASM_REFUSED,
    [`${VISUALIZE} a run > toHtml() escapes what the model wrote`]: WASM_REFUSED,
    [`${VISUALIZE} a run > toSvg(), machineToSvg() and dotToSvg() draw with Graphviz`]: WASM_REFUSED,
    [`${VISUALIZE} a run > a parent workflow's output draws as the result does`]: WASM_REFUSED,
  },
};

const installed: Readonly<Record<string, boolean>> = {
  deno: existsSync(binaryPath('deno')),
  bun: existsSync(binaryPath('bun')),
  workerd: existsSync(binaryPath('workerd')),
  chromium: chromiumAvailable,
};

/** The names vitest itself gives the tests of tests/portable, as the harness writes them: `file > describe > test`. */
async function testsVitestFinds(): Promise<string[]> {
  const { stdout } = await promisify(execFile)(join(root, 'node_modules', '.bin', 'vitest'), ['list', PORTABLE, '--json'], { cwd: root, maxBuffer: 16 << 20 });
  const listed = JSON.parse(stdout) as { name: string; file: string }[];
  return listed.map((test) => `${basename(test.file)} > ${test.name}`).sort();
}

describe('the portable tests in other runtimes', () => {
  let dir = '';
  let expected: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'booth-runtimes-'));
    [expected] = await Promise.all([testsVitestFinds(), bundlePortableTests(dir)]);
  }, 60_000);

  afterAll(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  for (const [name, runner] of Object.entries(RUNNERS)) {
    it.skipIf(!installed[name] && !process.env['CI'])(`${name} runs every one of them and fails none but its known failures`, async () => {
      const outcome = await runner(dir);
      // The line and its seconds in the test's output, as `npm run test:runtimes` prints it.
      console.log(summary(outcome));
      const { passed, failed, skipped } = outcome.results;
      const known = KNOWN_FAILURES[name] ?? {};
      expect(failed.map((failure) => failure.name).sort(), failed.map((failure) => `${failure.name}\n${failure.error}`).join('\n\n')).toEqual(Object.keys(known).sort());
      for (const failure of failed) expect(failure.error).toContain(known[failure.name]);
      expect(expected.length).toBeGreaterThan(0);
      expect([...passed, ...failed.map((failure) => failure.name), ...skipped].sort()).toEqual(expected);
    }, 150_000);
  }
});
