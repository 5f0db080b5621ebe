import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as machines from '../machines/index.js';
import * as booth from '../src/index.js';
import * as adapters from '../src/adapters.js';
import * as redis from '../src/redis.js';
import * as testing from '../src/testing.js';
import * as visualize from '../src/visualize/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('gives the two set-up commands', () => {
    expect(readme).toContain('npm ci && npm run demo');
    expect(readme).toMatch(/^npm test\b/m);
  });

  it('§10 says plainly that VERIFIED is an acceptance condition, never proof of truth', () => {
    expect(readme).toMatch(/They never mean the answer\s+is true/);
  });

  it('documents every runtime export', () => {
    const modules = [booth, machines, visualize, adapters, testing, redis];
    for (const name of modules.flatMap((module) => Object.keys(module))) {
      expect(readme, name).toContain(`\`${name}\``);
    }
  });

  it('lists the marker phrases as exported', () => {
    for (const marker of [booth.PARSE_RETRY_MARKER, booth.VALIDATION_RETRY_MARKER, booth.CONFIDENCE_RETRY_MARKER]) {
      expect(readme).toContain(`| \`${marker}\` |`);
    }
  });

  it('lists every [differs] point of the spec', () => {
    const section = readme.split('## Differences from the Python boothpy')[1]?.split('\n## ')[0] ?? '';
    expect(section.match(/^- /gm)).toHaveLength(14);
  });
});
