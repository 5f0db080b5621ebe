import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The import rules of .ci/dependency-cruiser.cjs, which `npm test` runs over src/ and
 * machines/: the repository keeps them, and a tree that breaks one fails with the rule's name.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const config = join(root, '.ci', 'dependency-cruiser.cjs');
const depcruise = join(root, 'node_modules', '.bin', 'depcruise');
const trees: string[] = [];

afterAll(() => {
  for (const tree of trees) rmSync(tree, { recursive: true, force: true });
});

function cruise(cwd: string): { status: number | null; output: string } {
  const run = spawnSync(depcruise, ['src', 'machines', '--config', config], { cwd, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** A small tree shaped like Booth's: each file a path and the files it imports. */
function tree(files: Record<string, readonly string[]>): string {
  const dir = mkdtempSync(join(tmpdir(), 'booth-layers-'));
  trees.push(dir);
  for (const folder of ['src', 'machines']) mkdirSync(join(dir, folder));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
  for (const [file, imports] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    const lines = imports.map((target, i) => {
      let specifier = join('/', target).replace(/\.ts$/, '.js');
      specifier = posixRelative(dirname(join('/', file)), specifier);
      return `import type { T${i} } from '${specifier}';`;
    });
    writeFileSync(join(dir, file), `${lines.join('\n')}\nexport type T = 1;\n${imports.map((_, i) => `export type T${i} = 1;`).join('\n')}\n`);
  }
  return dir;
}

function posixRelative(from: string, to: string): string {
  const a = from.split('/').filter(Boolean);
  const b = to.split('/').filter(Boolean);
  while (a.length > 0 && b.length > 0 && a[0] === b[0]) {
    a.shift();
    b.shift();
  }
  const up = a.map(() => '..');
  return [...(up.length > 0 ? up : ['.']), ...b].join('/');
}

describe('the import rules', () => {
  it('hold for the repository', () => {
    const { status, output } = cruise(root);
    expect(output).toContain('no dependency violations found');
    expect(status).toBe(0);
  });

  it('refuse a cycle, even through type-only imports', () => {
    const dir = tree({ 'src/decide/a.ts': ['src/decide/b.ts'], 'src/decide/b.ts': ['src/decide/a.ts'] });
    const { status, output } = cruise(dir);
    expect(status).not.toBe(0);
    expect(output).toContain('no-cycle');
  });

  it('refuse a machine that reaches up into the public functions', () => {
    const dir = tree({ 'machines/checkpoint/machine.ts': ['src/api/options.ts'], 'src/api/options.ts': [] });
    const { status, output } = cruise(dir);
    expect(status).not.toBe(0);
    expect(output).toContain('machines-imports-downward: machines/checkpoint/machine.ts → src/api/options.ts');
  });

  it('refuse a pure helper that imports the engine, and let the engine import it', () => {
    const dir = tree({ 'src/decide/prompts.ts': ['src/engine/stepper.ts'], 'src/engine/stepper.ts': [], 'src/engine/run.ts': ['src/decide/usage.ts'], 'src/decide/usage.ts': [] });
    const { status, output } = cruise(dir);
    expect(status).not.toBe(0);
    expect(output).toContain('decide-imports-downward: src/decide/prompts.ts → src/engine/stepper.ts');
    expect(output).not.toContain('src/engine/run.ts →');
  });

  it('refuse a Node built-in, or the file store that uses them, outside the command and boothjs/node', () => {
    const dir = tree({ 'src/stores/file-store.ts': [], 'src/stores/memory-store.ts': [], 'src/api/check.ts': ['src/stores/file-store.ts'], 'src/cli/index.ts': ['src/stores/file-store.ts'] });
    const fs = "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n";
    for (const file of ['src/stores/file-store.ts', 'src/stores/memory-store.ts', 'src/cli/index.ts']) writeFileSync(join(dir, file), `${fs}export type T = 1;\n`);
    const { status, output } = cruise(dir);
    expect(status).not.toBe(0);
    expect(output).toContain('portable-imports-no-node: src/stores/memory-store.ts → fs');
    expect(output).toContain('portable-stays-off-node-files: src/api/check.ts → src/stores/file-store.ts');
    expect(output).not.toContain('src/stores/file-store.ts →');
    expect(output).not.toContain('src/cli/index.ts →');
  });
});
