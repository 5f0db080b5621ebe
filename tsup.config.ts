import { defineConfig } from 'tsup';

// Dependencies and peers stay imports, never bundled: the optional peers (vega, vega-lite, ajv, ajv-formats,
// ioredis, bullmq, @opentelemetry/*) must be absent at run time without breaking anything, and are loaded only
// when an option or a flag asks for them. `shims` gives the CommonJS build the `import.meta.url`
// that telemetry resolves @opentelemetry/api from.
const shared = {
  target: 'node20' as const,
  external: ['xstate', '@viz-js/viz', 'commander', 'cli-progress', 'vega', 'vega-lite', 'ajv', 'ajv-formats', 'ioredis', 'bullmq', /^@opentelemetry\//],
  shims: true,
};

export default defineConfig([
  {
    ...shared,
    entry: {
      index: 'src/index.ts',
      machine: 'machines/index.ts',
      visualize: 'src/visualize/index.ts',
      adapters: 'src/adapters/index.ts',
      testing: 'src/testing/index.ts',
      redis: 'src/stores/redis-store.ts',
      node: 'src/stores/node.ts',
    },
    format: ['esm', 'cjs'],
    // Standard Schema's spec is types only, and its authors invite copying them: they go into
    // Booth's .d.ts, so an install does not need the package.
    dts: { resolve: ['@standard-schema/spec'] },
    // One shared chunk per format, so the machine exists once when several entry points are loaded.
    splitting: true,
    clean: true,
  },
  {
    ...shared,
    // The `booth` command: ESM only (it awaits at the top level), with its shebang.
    entry: { cli: 'src/cli/index.ts' },
    format: ['esm'],
    banner: { js: '#!/usr/bin/env node' },
  },
]);
