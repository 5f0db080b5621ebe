import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as machines from '../machines/index.js';
import * as booth from '../src/index.js';
import * as adapters from '../src/adapters/index.js';
import * as node from '../src/stores/node.js';
import * as redis from '../src/stores/redis-store.js';
import * as testing from '../src/testing/index.js';
import * as visualize from '../src/visualize/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const docsDir = new URL('../docs/', import.meta.url);
const pages = readdirSync(docsDir).filter((name) => name.endsWith('.md'));
const page = (name: string) => readFileSync(new URL(name, docsDir), 'utf8');
/** The README and every page of docs/: what a reader of the package has. */
const everything = [readme, ...pages.map(page)].join('\n');

/** A `## ` section of a Markdown text, from its heading to the next `## ` heading. */
const section = (text: string, heading: string) => text.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0] ?? '';

describe('README', () => {
  it('is a front door: at most 450 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(450);
  });

  it('gives the two set-up commands under a heading for working on Booth, not to app authors', () => {
    const contributing = section(readme, 'Working on Booth');
    expect(contributing).toContain('npm ci && npm run demo');
    expect(contributing).toMatch(/^npm test\b/m);
    // An app author who installed the package has no such scripts ("Missing script: demo").
    expect(readme.replace(contributing, '')).not.toMatch(/npm (ci|test|run demo)\b/);
    expect(readme.indexOf('\n## Install\n')).toBeLessThan(readme.indexOf('\n## Quick start\n'));
    expect(readme.indexOf('\n## Quick start\n')).toBeLessThan(readme.indexOf('\n## Working on Booth\n'));
  });

  it('§10 says plainly that VERIFIED is an acceptance condition, never proof of truth', () => {
    expect(readme).toMatch(/They never mean the answer\s+is true/);
  });

  it('runs its cache example: keyed by info.question, a recorded reply is found', () => {
    const block = readme
      .split('```ts\n')
      .map((code) => code.split('```')[0]!)
      .find((code) => code.includes('cache.get(question'));
    expect(block).toBeDefined();
    // The example as a reader copies it, its import given by this test.
    const run = new Function('check', `${block!.replace(/^import .*$/m, '')}\nreturn cached;`) as (check: typeof booth.check) => booth.BoothResult;
    const result = run(booth.check);
    expect(result.status).toBe('VERIFIED');
    expect(result.answer).toBe('100');
  });

  it('maps every page of docs/', () => {
    expect(pages.length).toBeGreaterThan(10);
    for (const name of pages) expect(readme, name).toContain(`](docs/${name})`);
  });
});

describe('README and docs/', () => {
  it('document every runtime export', () => {
    const modules = [booth, machines, visualize, adapters, testing, redis, node];
    for (const name of modules.flatMap((module) => Object.keys(module))) {
      expect(everything, name).toContain(`\`${name}\``);
    }
  });

  it('list the marker phrases as exported', () => {
    for (const marker of [booth.PARSE_RETRY_MARKER, booth.VALIDATION_RETRY_MARKER, booth.CONFIDENCE_RETRY_MARKER]) {
      expect(everything).toContain(`| \`${marker}\` |`);
    }
  });

  it('state timings only on the performance page, with the command that measures them', () => {
    const timing = /\d(?:\.\d+)? ?(?:µs|×)/;
    expect(readme).not.toMatch(timing);
    for (const name of pages.filter((name) => name !== 'performance.md')) expect(page(name), name).not.toMatch(timing);
    expect(page('performance.md')).toMatch(timing);
    expect(page('performance.md')).toContain('npm run bench');
    expect(readme).toContain('](docs/performance.md)');
  });

  it('list every [differs] point of the spec', () => {
    const differences = page('differences-from-boothpy.md');
    expect(differences.match(/^- /gm)).toHaveLength(14);
  });
});
