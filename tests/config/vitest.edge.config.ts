import { isBuiltin } from 'node:module';
import type { Plugin } from 'vite';
import { configDefaults, defineConfig } from 'vitest/config';
import base from '../../vitest.config.js';

/**
 * The portable core tests in the Edge Runtime, as the Vercel AI SDK tests its packages:
 * vitest's `edge-runtime` environment over the same files (issue #28).
 *
 * - `pool: 'vmForks'`: the environment's `setupVM` evaluates every module — the test files,
 *   Booth's dist and XState — inside an `@edge-runtime/vm` context, with its globals
 *   (`fetch`, `Request`, `crypto`, …). The default pool instead copies those globals onto
 *   Node's own, puts Node's `fetch` back among them, and runs the code in Node's realm.
 * - `server.deps.inline`: XState and Graphviz go through Vite like Booth's dist, so the
 *   check below covers them too.
 * - A Node built-in imported by any module loaded here fails that module's import: in the
 *   VM it would still be served from Node, while the Edge Runtime has none.
 * - tests/runtimes/edge/without-node-globals.ts takes away the Node globals vitest adds, and
 *   tests/runtimes/edge/isolation.test.ts checks all of the above.
 */
export default defineConfig({
  plugins: [withoutNodeBuiltins()],
  test: {
    ...base.test,
    include: ['tests/portable/**/*.test.ts', 'tests/runtimes/edge/*.test.ts'],
    exclude: configDefaults.exclude,
    environment: 'edge-runtime',
    pool: 'vmForks',
    setupFiles: ['tests/runtimes/edge/without-node-globals.ts'],
    server: { deps: { inline: ['xstate', '@viz-js/viz'] } },
  },
});

/** Fails the import of any module that imports a Node built-in, statically or with `import()`. */
function withoutNodeBuiltins(): Plugin {
  return {
    name: 'booth:without-node-builtins',
    transform(code, id) {
      const builtins = new Set<string>();
      visit(this.parse(code), (source) => {
        if (isBuiltin(source)) builtins.add(source);
      });
      if (builtins.size > 0) this.error(`${id} imports the Node built-in ${[...builtins].join(', ')}, which the Edge Runtime does not have.`);
      return null;
    },
  };
}

/** Calls `found` with the source of every import, re-export and literal `import()` under `node`. */
function visit(node: unknown, found: (source: string) => void): void {
  if (Array.isArray(node)) {
    for (const child of node) visit(child, found);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const { type, source } = node as { type?: unknown; source?: { type?: unknown; value?: unknown } | null };
  const imports = type === 'ImportDeclaration' || type === 'ExportNamedDeclaration' || type === 'ExportAllDeclaration' || type === 'ImportExpression';
  if (imports && source?.type === 'Literal' && typeof source.value === 'string') found(source.value);
  for (const child of Object.values(node)) visit(child, found);
}
