import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/**
 * The CommonJS build, as a bundler takes it for a browser or a Worker when an app's compiled
 * code says `require('boothjs')`: it must load and run a check where there is no `__filename`,
 * no `process` and no `require` — a fresh context with only what a Worker has.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const APP = `
const { check, VERIFIED } = require('boothjs');
const { envelope, scriptedModel } = require('boothjs/testing');
const result = check(scriptedModel([envelope('Paris', 0.4), envelope('Paris', 0.95)]).sync, 'What is the capital of France?');
let telemetry;
try {
  check(() => envelope('Paris', 0.9), 'q', { telemetry: true });
} catch (error) {
  telemetry = error.message;
}
globalThis.report = { status: result.status, verified: VERIFIED, attempts: result.attempts.length, telemetry };
`;

describe('the CommonJS build in a bundle for a browser or a Worker', () => {
  it('loads with no __filename or process, runs a check, and says telemetry needs telemetry.api there', async () => {
    const bundled = await build({
      stdin: { contents: APP, resolveDir: root, loader: 'js' },
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'iife',
      // What `require` resolves to: the package's CommonJS files, as a bundler of CommonJS code picks them.
      conditions: ['require'],
      mainFields: ['main'],
      logLevel: 'silent',
    });
    const code = bundled.outputFiles[0]!.text;
    expect(code).toContain('dist/index.cjs');
    // Web globals a Worker has, and nothing of Node's.
    const context: { report?: unknown } & Record<string, unknown> = { URL, TextEncoder, TextDecoder, setTimeout, clearTimeout, crypto, console };
    runInNewContext(code, context);
    expect(context.report).toEqual({
      status: 'REPAIRED',
      verified: 'VERIFIED',
      attempts: 2,
      telemetry:
        "`telemetry` cannot load @opentelemetry/api in this runtime (a browser, an edge runtime, a Worker, Node before 20.16): pass the module as `telemetry.api` (import * as api from '@opentelemetry/api').",
    });
  });
});
