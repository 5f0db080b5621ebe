import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundlePortableTests } from './bundle.js';
import { RUNNERS, summary } from './runners.js';

/**
 * `npm run test:runtimes [-- deno|bun|workerd|chromium ...]` (all four when none is named):
 * bundles tests/portable from the built package (`npm run build` first), runs it in each
 * runtime, prints `<runtime> <version>: N passed, M failed` and every failure, and exits
 * non-zero when a test failed, a runtime ran none, or a runtime could not run.
 */

async function main(names: readonly string[]): Promise<boolean> {
  const unknown = names.filter((name) => !Object.hasOwn(RUNNERS, name));
  if (unknown.length > 0) throw new Error(`Unknown runtime ${unknown.join(', ')}: expected any of ${Object.keys(RUNNERS).join(', ')}`);
  // A folder outside the repository: Deno and Bun would otherwise find its package.json.
  const dir = mkdtempSync(join(tmpdir(), 'booth-runtimes-'));
  try {
    await bundlePortableTests(dir);
    let ok = true;
    for (const [name, runner] of Object.entries(RUNNERS).filter(([name]) => names.length === 0 || names.includes(name))) {
      try {
        const outcome = await runner(dir);
        console.log(summary(outcome));
        for (const failure of outcome.results.failed) console.log(`  FAIL ${failure.name}\n${failure.error.replace(/^/gm, '    ')}`);
        if (outcome.results.failed.length > 0 || outcome.results.passed.length === 0) ok = false;
      } catch (error) {
        console.log(`${name}: could not run\n${String(error instanceof Error ? (error.stack ?? error.message) : error).replace(/^/gm, '    ')}`);
        ok = false;
      }
    }
    return ok;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = (await main(process.argv.slice(2))) ? 0 : 1;
