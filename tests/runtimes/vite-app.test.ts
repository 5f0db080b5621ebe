import { isBuiltin } from 'node:module';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, createLogger, type Plugin, type Rollup } from 'vite';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * A newcomer's browser app: Vite builds it from `boothjs` as installed (a link to this package,
 * whose dist/ `npm run build` made) with no shim, no alias and no polyfill. Vite does not fail on
 * a Node built-in: it puts an empty module in its place (and its warning reaches no logger of
 * the build's), so a plugin of the test's notes every import of one, and so does any warning.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const app = mkdtempSync(join(tmpdir(), 'booth-vite-app-'));
afterAll(() => rmSync(app, { recursive: true, force: true }));

const MAIN = `
import { acheck, memoryStore, VERIFIED } from 'boothjs';
import { openAICompatible } from 'boothjs/adapters';
import { checkpointMachine } from 'boothjs/machine';
import { envelope, scriptedModel } from 'boothjs/testing';
import { toHtml } from 'boothjs/visualize';

const model = scriptedModel([envelope('Paris', 0.4), envelope('Paris', 0.95)]);
const result = await acheck(model.async, 'What is the capital of France?', { checkpoint: memoryStore(), key: 'k' });
document.body.textContent = result.status === VERIFIED ? await toHtml(result) : checkpointMachine.id;
// Made, not called: the adapter must bundle for the browser too.
globalThis.adapter = openAICompatible({ baseURL: 'http://127.0.0.1:1/v1', model: 'm' });
`;

/** Notes each import of a Node built-in that the build resolves, by whom. */
function noNodeBuiltins(said: string[]): Plugin {
  return {
    name: 'no-node-builtins',
    enforce: 'pre',
    resolveId(source, importer) {
      if (isBuiltin(source)) said.push(`${importer ?? '?'} imports ${source}`);
      return null;
    },
  };
}

describe('a Vite browser app that imports Booth', () => {
  it('builds with every portable entry and no warning: nothing of Node is needed', async () => {
    mkdirSync(join(app, 'node_modules'));
    symlinkSync(root, join(app, 'node_modules', 'boothjs'), 'dir');
    writeFileSync(join(app, 'index.html'), '<!doctype html><html><body><script type="module" src="./main.js"></script></body></html>');
    writeFileSync(join(app, 'main.js'), MAIN);
    const said: string[] = [];
    const logger = createLogger('warn', { allowClearScreen: false });
    logger.warn = (message) => void said.push(message);
    logger.warnOnce = (message) => void said.push(message);
    logger.error = (message) => void said.push(message);
    const output = (await build({ root: app, configFile: false, logLevel: 'warn', customLogger: logger, plugins: [noNodeBuiltins(said)], build: { write: false, target: 'es2022' } })) as Rollup.RollupOutput;
    expect(said).toEqual([]);
    const code = output.output.flatMap((file) => (file.type === 'chunk' ? [file.code] : [])).join('\n');
    // Booth's machine, its visualizer and its adapters are in the bundle, not left as imports
    // (state names and the adapter's error text only Booth's code holds; the app's holds none).
    for (const held of ['ambiguityGate', 'confidenceGate', 'digraph', 'chat/completions']) expect(code).toContain(held);
    expect(code).not.toMatch(/from\s*["']boothjs/);
    expect(code).not.toMatch(/from\s*["']node:|__vite-browser-external/);
  }, 120_000);
});
