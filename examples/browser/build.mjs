// Builds the browser example into examples/browser/dist/, or into the folder given: main.ts
// bundled with Booth from the built package (run `npm run build` first), index.html beside it.
// With --serve, then serves that folder on http://127.0.0.1 (a page's module scripts do not
// load from file:).
import { copyFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build, context } from 'esbuild';

const here = fileURLToPath(new URL('.', import.meta.url));
const { values, positionals } = parseArgs({ options: { serve: { type: 'boolean', default: false } }, allowPositionals: true });
const out = resolve(positionals[0] ?? join(here, 'dist'));
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(here, 'main.ts')],
  outfile: join(out, 'main.js'),
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  // Not tsconfig.json, whose paths point `boothjs` at the sources for the type checker: the
  // bundle takes the package as published, through its exports.
  tsconfigRaw: {},
  logLevel: 'warning',
});
copyFileSync(join(here, 'index.html'), join(out, 'index.html'));
console.log(`example: built ${out}`);

if (values.serve) {
  const server = await context({ logLevel: 'warning' });
  const { port } = await server.serve({ servedir: out, host: '127.0.0.1' });
  console.log(`example: open http://127.0.0.1:${port}/ (Ctrl-C stops the server)`);
}
