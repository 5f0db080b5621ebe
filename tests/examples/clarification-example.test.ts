import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLARIFICATION_MARKER } from '../../src/index.js';
import { envelope } from '../fixtures/helpers.js';
import { startProvider } from '../fixtures/provider-server.js';

/**
 * The human-in-the-loop program of docs/clarification.md, run as a newcomer would run it
 * after pasting it: a real process, its imports pointed at this checkout, a real
 * OpenAI-compatible server on loopback, and the person's answer typed on its stdin.
 */
const page = readFileSync(new URL('../../docs/clarification.md', import.meta.url), 'utf8');
const program = page.split('\n## In code: `clarify()`\n')[1]!.split('```ts\n')[1]!.split('```')[0]!;
const src = (path: string) => new URL(`../../src/${path}`, import.meta.url).pathname;
const runnable = program.replace("from 'boothjs'", `from '${src('index.ts')}'`).replace("from 'boothjs/adapters'", `from '${src('adapters/index.ts')}'`);
const tsx = new URL('../../node_modules/.bin/tsx', import.meta.url).pathname;

let provider: Awaited<ReturnType<typeof startProvider>>;
const dir = mkdtempSync(join(tmpdir(), 'booth-clarify-example-'));
const file = join(dir, 'ask.mts');
beforeAll(async () => {
  provider = await startProvider();
  writeFileSync(file, runnable);
});
afterAll(async () => {
  await provider.close();
  rmSync(dir, { recursive: true, force: true });
});

const ambiguous = envelope('4,879 km', 0.8, { ambiguous: true, interpretations: ['Mercury the planet', 'mercury the element'], chosen_interpretation: 'Mercury the planet' });

/** Runs the program and, as a person does, types `typed` once it asks (not before: a line typed early is lost to readline). */
function run(typed: string): Promise<{ stdout: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, [file], { env: { ...process.env, OPENAI_BASE_URL: `${provider.url}/v1`, OPENAI_API_KEY: 'sk-test', MODEL: 'test-model' } });
    let stdout = '';
    const timer = setTimeout(() => child.kill(), 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.endsWith('in your own words: ')) child.stdin.end(typed);
    });
    child.stderr.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ stdout, code });
    });
  });
}

const userTurns = () => provider.received.map((r) => (r.body['messages'] as Array<{ role: string; content: string }>).at(-1)!.content);

describe('the human-in-the-loop example of docs/clarification.md, pasted', () => {
  it('imports only what a newcomer has: boothjs, boothjs/adapters and Node', () => {
    expect([...program.matchAll(/from '([^']+)'/g)].map((m) => m[1])).toEqual(['node:readline/promises', 'boothjs', 'boothjs/adapters']);
  });

  it('shows the readings, takes the number typed, and asks again with that reading: VERIFIED', async () => {
    provider.received.length = 0;
    provider.script.push({ text: ambiguous }, { text: envelope('4,879 km', 0.9) });
    const { stdout, code } = await run('1\n');
    expect(code, stdout).toBe(0);
    expect(stdout).toContain('1. "Mercury the planet"\n2. "mercury the element"\n');
    expect(stdout.trimEnd().split('\n').at(-1)).toMatch(/VERIFIED 4,879 km$/);
    expect(userTurns()).toEqual(['How big is Mercury?', `How big is Mercury?\n\n${CLARIFICATION_MARKER}: they mean "Mercury the planet", one of the readings you offered. Answer it in that sense.`]);
  });

  it('takes words typed as the question rephrased; an empty line leaves it AMBIGUOUS', async () => {
    provider.received.length = 0;
    provider.script.push({ text: ambiguous }, { text: envelope('4,879 km', 0.9) });
    const rephrased = await run('the diameter of the planet\n');
    expect(rephrased.stdout.trimEnd().split('\n').at(-1)).toMatch(/VERIFIED 4,879 km$/);
    expect(userTurns()[1]).toContain(`${CLARIFICATION_MARKER}, rephrasing it as "the diameter of the planet".`);
    provider.received.length = 0;
    provider.script.push({ text: ambiguous });
    const skipped = await run('\n');
    expect(skipped.stdout.trimEnd().split('\n').at(-1)).toMatch(/AMBIGUOUS 4,879 km$/);
    expect(provider.received).toHaveLength(1);
  });
});
