import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    machine: 'machines/index.ts',
    visualize: 'src/visualize/index.ts',
    adapters: 'src/adapters.ts',
    testing: 'src/testing.ts',
    cli: 'src/cli.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  // One shared chunk per format, so the machine exists once when both entry points are loaded.
  splitting: true,
  target: 'node20',
  clean: true,
  external: ['xstate', '@viz-js/viz'],
});
