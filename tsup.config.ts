import { defineConfig } from 'tsup';

// Dependencies and peers stay imports, never bundled: the optional peers (vega, vega-lite, ajv, ajv-formats,
// ioredis, bullmq, @opentelemetry/*) must be absent at run time without breaking anything, and are loaded only
// when an option or a flag asks for them. No shims: tsup's shim for `import.meta.url` in the CommonJS build reads
// `__filename` as the module loads, which fails wherever a bundler took the CommonJS build for a browser or a
// Worker; telemetry, the one reader of it, falls back to `__filename` itself, when it loads its API.
const shared = {
  target: 'node20' as const,
  external: ['xstate', '@viz-js/viz', 'commander', 'cli-progress', 'vega', 'vega-lite', 'ajv', 'ajv-formats', 'ioredis', 'bullmq', /^@opentelemetry\//],
  shims: false,
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
    // CommonJS has no import.meta: there telemetry reads `__filename` instead (see above).
    esbuildOptions(options, { format }) {
      if (format === 'cjs') options.define = { ...options.define, 'import.meta.url': 'undefined' };
    },
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
