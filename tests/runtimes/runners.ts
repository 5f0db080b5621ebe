import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { launchChromium } from '../fixtures/chromium.js';
import { BUNDLE } from './bundle.js';
import type { Results } from './harness.js';

/**
 * Runs the bundle of tests/runtimes/bundle.ts in one runtime each: Deno, Bun, workerd and
 * Chromium. The first three come from tests/runtimes/binaries/package.json (installed by
 * tests/runtimes/install.sh): apart, so that their binaries do not shadow the project's, and in
 * a folder of their own, so that no package.json comes between tests/runtimes and the
 * project's, whose name lets the tests there import 'boothjs'. Chromium is Debian's. Each
 * runner writes its small entry beside the bundle, in `dir`.
 */

export interface Outcome {
  readonly runtime: string;
  readonly version: string;
  readonly results: Results;
  /** From starting the runtime to having its results. */
  readonly seconds: number;
}

export type Runner = (dir: string) => Promise<Outcome>;

/** The line CI reads for each runtime. */
export function summary(outcome: Outcome): string {
  const { runtime, version, results, seconds } = outcome;
  const skipped = results.skipped.length > 0 ? `, ${results.skipped.length} skipped` : '';
  return `${runtime} ${version}: ${results.passed.length} passed, ${results.failed.length} failed${skipped} (${seconds.toFixed(1)} s)`;
}

const BIN = join(dirname(fileURLToPath(import.meta.url)), 'binaries', 'node_modules', '.bin');
/** Ample for the portable tests; a runtime that hangs is killed rather than hanging CI. */
const TIMEOUT_MS = 120_000;
/** Prefixes the one line of stdout that holds the results, whatever else the tests print. */
const MARK = 'BOOTH_PORTABLE_RESULTS ';
/** For Deno and Bun: run the tests and print the results. */
const CLI_ENTRY = `import { run } from './${BUNDLE}';\nconsole.log(${JSON.stringify(MARK)} + JSON.stringify(await run()));\n`;

const run = promisify(execFile);

/** Where tests/runtimes/install.sh puts a runtime's binary. */
export function binaryPath(name: string): string {
  return join(BIN, name);
}

function binary(name: string): string {
  const path = binaryPath(name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run bash tests/runtimes/install.sh`);
  return path;
}

/** The first line of a `--version`, without the program's name. */
async function versionOf(path: string): Promise<string> {
  const { stdout } = await run(path, ['--version']);
  const first = stdout.split('\n')[0] ?? '';
  return first.replace(/^\S+ (?=\d)/, '').split(' ')[0] ?? first;
}

function resultsIn(stdout: string, stderr: string): Results {
  const line = stdout.split('\n').find((candidate) => candidate.startsWith(MARK));
  if (line === undefined) throw new Error(`No results were printed.\nstdout:\n${stdout}\nstderr:\n${stderr}`);
  return JSON.parse(line.slice(MARK.length)) as Results;
}

/** Runs `args` and reads the results from its stdout; a non-zero exit fails with what it printed. */
async function runCli(path: string, args: readonly string[], dir: string): Promise<Results> {
  writeFileSync(join(dir, 'main.js'), CLI_ENTRY);
  // NO_COLOR: plain error messages in the report.
  const { stdout, stderr } = await run(path, [...args, 'main.js'], { cwd: dir, timeout: TIMEOUT_MS, maxBuffer: 64 << 20, env: { ...process.env, NO_COLOR: '1' } });
  return resultsIn(stdout, stderr);
}

/** Runs `work`, timing it from the runtime's start to its results. */
async function timed(runtime: string, work: () => Promise<{ version: string; results: Results }>): Promise<Outcome> {
  const started = performance.now();
  const { version, results } = await work();
  return { runtime, version, results, seconds: (performance.now() - started) / 1000 };
}

/**
 * Deno with no permission at all (`--no-prompt` refuses any it would ask for), and nothing
 * but the bundle: no config, lock file, npm or remote modules.
 */
export const deno: Runner = (dir) =>
  timed('deno', async () => {
    const path = binary('deno');
    return { version: await versionOf(path), results: await runCli(path, ['run', '--no-prompt', '--no-config', '--no-lock', '--no-npm', '--no-remote'], dir) };
  });

/** Bun, with its auto-install off: the bundle imports nothing. */
export const bun: Runner = (dir) =>
  timed('bun', async () => {
    const path = binary('bun');
    return { version: await versionOf(path), results: await runCli(path, ['run', '--no-install'], dir) };
  });

/** The date of workerd's own compatibility rules the tests run under; no `nodejs_compat` flag, so no Node API. */
const COMPATIBILITY_DATE = '2026-11-01';

const WORKER_ENTRY = `import { run } from './${BUNDLE}';
export default { async fetch() { return Response.json(await run()); } };
`;

/** A worker serving WORKER_ENTRY on 127.0.0.1, at a port workerd picks and reports on its control fd. */
const WORKERD_CONFIG = `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "portable", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "portable")],
);

const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "${BUNDLE}", esModule = embed "${BUNDLE}"),
  ],
  compatibilityDate = "${COMPATIBILITY_DATE}",
);
`;

/**
 * Cloudflare's workerd, started directly (miniflare 4 needs Node 22): the bundle is an ES module
 * worker whose fetch handler runs the tests and answers their results as JSON.
 */
export const workerd: Runner = (dir) =>
  timed('workerd', async () => {
    const path = binary('workerd');
    writeFileSync(join(dir, 'worker.js'), WORKER_ENTRY);
    writeFileSync(join(dir, 'config.capnp'), WORKERD_CONFIG);
    const version = await versionOf(path);
    // fd 3 is the control fd: workerd writes a line of JSON there for each socket it listens on.
    const child = spawn(path, ['serve', 'config.capnp', '--control-fd=3'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
    const exited = new Promise<never>((_, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => reject(new Error(`workerd exited (${code ?? signal}) before answering:\n${stderr}`)));
    });
    // Its exit after the answer, when the runner stops it, is no failure.
    exited.catch(() => undefined);
    const timer = setTimeout(() => child.kill(), TIMEOUT_MS);
    try {
      const port = await Promise.race([listeningPort(child.stdio[3] as NodeJS.ReadableStream), exited]);
      const response = await Promise.race([fetch(`http://127.0.0.1:${port}/`), exited]);
      const body = await response.text();
      if (!response.ok) throw new Error(`workerd answered ${response.status}:\n${body}\n${stderr}`);
      return { version, results: JSON.parse(body) as Results };
    } finally {
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill();
        await gone;
      }
    }
  });

/** The port of the "http" socket, from workerd's `{"event":"listen","socket":"http","port":…}` line. */
function listeningPort(control: NodeJS.ReadableStream): Promise<number> {
  return new Promise((resolve) => {
    let buffered = '';
    control.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (const line of buffered.split('\n').slice(0, -1)) {
        let event: { event?: string; socket?: string; port?: number };
        try {
          event = JSON.parse(line) as typeof event;
        } catch {
          // Not an event line: a throw here would escape the stream's handler and end the test worker.
          continue;
        }
        if (event.event === 'listen' && event.socket === 'http' && typeof event.port === 'number') resolve(event.port);
      }
      buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
    });
  });
}

/**
 * The page allows only scripts from its own origin and nothing else: no inline script, no
 * eval, no network. The one exception is compiling WebAssembly, which boothjs/visualize's SVG
 * (Graphviz in @viz-js/viz) needs: an application with a content security policy must allow it
 * to draw. The page's module runs the tests; the runner awaits their results.
 */
const PAGE_POLICY = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'";
const PAGE = '<!doctype html><meta charset="utf-8"><title>Booth portable tests</title><script type="module" src="/page.js"></script>\n';
const PAGE_ENTRY = `import { run } from './${BUNDLE}';\nglobalThis.portableResults = run();\n`;
const TYPES: Readonly<Record<string, string>> = { '/': 'text/html; charset=utf-8', '/page.js': 'text/javascript', [`/${BUNDLE}`]: 'text/javascript' };

/** Debian's Chromium, through playwright-core, loading the page from a loopback server of `dir`. */
export const chromium: Runner = async (dir) => {
  writeFileSync(join(dir, 'page.js'), PAGE_ENTRY);
  const server = createServer((request, response) => {
    const type = TYPES[request.url ?? ''];
    if (type === undefined) return void response.writeHead(404).end();
    const body = request.url === '/' ? PAGE : readFileSync(join(dir, request.url ?? ''));
    response.writeHead(200, { 'content-type': type, 'content-security-policy': PAGE_POLICY }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await timed('chromium', async () => {
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on('pageerror', (error) => errors.push(error.stack ?? error.message));
        page.on('console', (message) => void (message.type() === 'error' && errors.push(message.text())));
        await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
        const results = await page.evaluate(() => (globalThis as { portableResults?: Promise<Results> }).portableResults);
        if (results === undefined) throw new Error(`The page did not start the tests:\n${errors.join('\n')}`);
        return { version: browser.version(), results };
      } finally {
        await browser.close();
      }
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
};

export const RUNNERS: Readonly<Record<string, Runner>> = { deno, bun, workerd, chromium };
