import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { available, useChromium, watchPage } from '../fixtures/chromium.js';

/**
 * examples/browser, as its README runs it: built by its build script against the built
 * package (dist/, so `npm run build` first, as .ci/run does), served on a loopback port, and
 * opened in Debian's Chromium with every request to anywhere else blocked and recorded.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUTPUT = new URL('../../test-output/', import.meta.url);
const TYPES: Readonly<Record<string, string>> = { '/index.html': 'text/html; charset=utf-8', '/main.js': 'text/javascript; charset=utf-8' };

describe.runIf(available)('the browser example', () => {
  const browser = useChromium(OUTPUT);
  let built: string;
  let server: Server;
  let origin: string;

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist/index.js'))) throw new Error('dist/ is missing: run `npm run build` before this test');
    built = mkdtempSync(join(tmpdir(), 'booth-browser-example-'));
    await promisify(execFile)(process.execPath, [join(ROOT, 'examples/browser/build.mjs'), built], { cwd: ROOT });
    // The two files the build writes, and nothing else.
    server = createServer((request, response) => {
      const path = request.url === '/' ? '/index.html' : (request.url ?? '');
      const type = TYPES[path];
      if (type === undefined) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': type }).end(readFileSync(join(built, path)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 120_000);

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    if (built) rmSync(built, { recursive: true, force: true });
  });

  it('runs acheck() through a confidence retry and shows the status, the answer and the path drawn as SVG', async () => {
    const page = await browser().newPage({ viewport: { width: 1200, height: 900 } });
    const { errors, requests: leaked } = await watchPage(page, (url) => url.startsWith(`${origin}/`));

    await page.goto(`${origin}/`);
    await page.waitForSelector('body:not([data-state="running"])', { timeout: 30_000 });

    expect(await page.locator('body').getAttribute('data-state')).toBe('done');
    expect(await page.locator('#error').textContent()).toBe('');
    expect(await page.locator('#status').textContent()).toBe('REPAIRED');
    expect(await page.locator('#answer').textContent()).toBe('Paris');
    expect(await page.locator('#confidence').textContent()).toBe('0.9');
    expect(await page.locator('#attempts li').allTextContents()).toEqual([
      'Lyon, confidence 0.3 → asked again',
      'Paris, confidence 0.9 → REPAIRED',
    ]);
    expect(await page.locator('#path').textContent()).toBe(
      'calling → parsing → ambiguityGate → confidenceGate → reconsidering → calling → parsing → ambiguityGate → confidenceGate → repaired',
    );

    // The drawing is the whole checkpoint machine, the states and edges the run went through marked.
    const svg = page.locator('#diagram > svg');
    expect(await svg.count()).toBe(1);
    expect(await svg.isVisible()).toBe(true);
    expect((await page.locator('#diagram svg g.node.visited > title').allTextContents()).sort()).toEqual(
      ['ambiguityGate', 'asking', 'calling', 'confidenceGate', 'parsing', 'reconsidering', 'repaired'].sort(),
    );
    expect(await page.locator('#diagram svg g.node > title', { hasText: /^verified$/ }).count()).toBe(1);
    expect(await page.locator('#diagram svg g.edge.taken > title').allTextContents()).toContain('confidenceGate->reconsidering');

    await page.screenshot({ path: fileURLToPath(new URL('browser-example.png', OUTPUT)), fullPage: true });
    expect(errors).toEqual([]);
    expect(leaked).toEqual([]);
  }, 60_000);
});
