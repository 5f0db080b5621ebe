// Bundle sizes of the built package for a browser (`npm run size`, after `npm run build`).
//
// Each entry below is a few lines an app might write, bundled by esbuild from dist/ as an app
// would bundle the installed package: minified, ESM, for the browser, so a Node built-in that
// reached an entry fails the build instead of being left for the app to shim. Sizes are bytes of
// the bundle, minified and gzipped (level 9). The peers an entry carries apart (`apart`) are
// measured by bundling once with all of them external — Booth's part — and then adding them back
// one at a time; a peer's part is what adding it added. Gzip is not additive, so the gzipped
// parts of a peer are approximate; Booth's part is measured as such.
//
// Each entry is also bundled from src/ (the package's entry points aliased to their sources),
// where a bundler drops every file the import does not need: what the bundle from dist/ holds
// more is code kept only because tsup put it in a chunk the entry loads — a top-level call in
// a module the entry does not use (see docs/bundle-size.md).
//
// Booth's parts of the budgeted entries are compared with the budget file (default
// .ci/size-budget.json, or `--budget <file>`), and so is what dist/ keeps more than src/
// (`chunkOverhead`); the script exits 1 naming every entry over. `--analyze` also prints, per
// entry, the largest inputs as esbuild's metafile has them: tsup's chunks from dist/, source
// files from src/.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const ENTRIES = [
  {
    name: 'check',
    budgeted: true,
    apart: ['xstate'],
    // What a check() bundle must not hold (docs/bundle-size.md): the drawings, the command, the
    // adapters, and every store but the error a bad checkpoint raises (src/stores/store.ts).
    leavesOut: /^src\/(visualize|cli|adapters)\/|^src\/stores\/(?!store\.ts$)/,
    code: `import { check } from 'boothjs';\nglobalThis.result = check(() => '', 'q');`,
  },
  {
    name: 'acheck+adapters',
    budgeted: true,
    apart: ['xstate'],
    code: [
      `import { acheck } from 'boothjs';`,
      `import { openAICompatible } from 'boothjs/adapters';`,
      `globalThis.result = acheck(openAICompatible({ baseURL: 'https://example.com/v1', model: 'm' }), 'q');`,
    ].join('\n'),
  },
  {
    // Reported, not budgeted: Graphviz compiled to WebAssembly is most of it, and it is loaded
    // only by a page that draws.
    name: 'toHtml',
    budgeted: false,
    apart: ['xstate', '@viz-js/viz'],
    code: `import { toHtml } from 'boothjs/visualize';\nglobalThis.draw = toHtml;`,
  },
];

// The package's entry points as tsup builds them (tsup.config.ts), for the bundles from src/.
const SOURCES = {
  'boothjs/adapters': './src/adapters/index.ts',
  'boothjs/visualize': './src/visualize/index.ts',
  boothjs: './src/index.ts',
};

const { values: flags } = parseArgs({
  options: { budget: { type: 'string', default: '.ci/size-budget.json' }, analyze: { type: 'boolean', default: false } },
});

if (!existsSync(new URL('../dist/index.js', import.meta.url))) {
  console.error('size: dist/ is missing: run `npm run build` first');
  process.exit(2);
}
const budgetFile = flags.budget;
const budget = JSON.parse(readFileSync(budgetFile, 'utf8'));

/** One bundle of `entry` with `external` left out: its bytes minified and gzipped, and its metafile. */
async function bundle(entry, external, alias = {}) {
  const built = await build({
    stdin: { contents: entry.code, resolveDir: ROOT, sourcefile: `${entry.name}.js`, loader: 'js' },
    absWorkingDir: ROOT,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    external,
    alias,
    metafile: true,
    write: false,
    logLevel: 'silent',
  }).catch((error) => {
    const problems = (error.errors ?? [{ text: error.message }]).map(({ text, location }) => (location ? `${text} (${location.file}:${location.line})` : text));
    console.error(`size: ${entry.name} does not bundle for the browser:\n  ${problems.join('\n  ')}`);
    process.exit(1);
  });
  // What esbuild warns of, an app's bundler will warn its author of: shown, once, not failed on.
  for (const { text, location } of built.warnings) {
    const warning = `size: warning bundling ${entry.name}: ${text}${location ? ` (${location.file}:${location.line})` : ''}`;
    if (!warned.has(warning)) console.error(warning);
    warned.add(warning);
  }
  const [output] = built.outputFiles;
  return { minified: output.contents.length, gzip: gzipSync(output.contents, { level: 9 }).length, metafile: built.metafile };
}
const warned = new Set();

const bytes = (n) => `${n.toLocaleString('en-US')} B`;
const row = (label, { minified, gzip }, sign = '') =>
  `  ${label.padEnd(12)} ${(sign + bytes(minified)).padStart(12)} min ${(sign + bytes(gzip)).padStart(11)} gz`;

/** The largest inputs of a bundle, by bytes in the output. */
function topInputs(metafile, count) {
  const [output] = Object.values(metafile.outputs);
  return Object.entries(output.inputs)
    .sort(([, a], [, b]) => b.bytesInOutput - a.bytesInOutput)
    .slice(0, count)
    .map(([path, { bytesInOutput }]) => `    ${bytes(bytesInOutput).padStart(10)}  ${path}`);
}

const over = [];
for (const entry of ENTRIES) {
  const booth = await bundle(entry, entry.apart);
  const rows = [];
  let before = booth;
  for (const [i, peer] of entry.apart.entries()) {
    const withPeer = await bundle(entry, entry.apart.slice(i + 1));
    rows.push(row(peer, { minified: withPeer.minified - before.minified, gzip: withPeer.gzip - before.gzip }, '+'));
    before = withPeer;
  }
  const fromSource = await bundle(entry, entry.apart, SOURCES);
  const overhead = booth.minified - fromSource.minified;
  const limit = entry.budgeted ? budget[entry.name] : undefined;
  const budgetNote = !entry.budgeted ? '  (not budgeted)' : limit ? `  budget ${bytes(limit.minified)} min, ${bytes(limit.gzip)} gz` : '';
  console.log(`${entry.name}: ${bytes(before.minified)} min, ${bytes(before.gzip)} gz in all`);
  console.log(row('Booth', booth) + budgetNote);
  console.log(rows.join('\n'));
  console.log(`${row('from src/', fromSource)}  (dist/ keeps ${bytes(overhead)} more)`);

  // The output's inputs with bytes in it: esbuild's list of inputs also holds files it read and shook out.
  const kept = Object.entries(Object.values(fromSource.metafile.outputs)[0].inputs).filter(([, input]) => input.bytesInOutput > 0);
  const heldBack = entry.leavesOut ? kept.map(([input]) => input).filter((input) => entry.leavesOut.test(input)) : [];
  if (heldBack.length > 0) over.push(`${entry.name}: the bundle holds ${heldBack.join(', ')}, which it should leave out`);

  if (entry.budgeted) {
    if (limit === undefined) over.push(`${entry.name} has no budget in ${budgetFile}`);
    for (const measure of ['minified', 'gzip']) {
      // Written so that a budget that is not a number fails too.
      if (limit !== undefined && !(booth[measure] <= limit[measure])) {
        over.push(`${entry.name}: Booth's part is ${bytes(booth[measure])} ${measure}, above its budget of ${limit[measure]} B (${budgetFile})`);
      }
    }
    if (!(overhead <= budget.chunkOverhead)) {
      over.push(
        `${entry.name}: bundled from dist/, Booth's part keeps ${bytes(overhead)} minified more than bundled from src/, above the ${budget.chunkOverhead} B allowed (chunkOverhead in ${budgetFile}): code at the top of a module that tsup put in a chunk this entry loads; \`npm run size -- --analyze\` compares the two`,
      );
    }
  }

  if (flags.analyze) {
    console.log(`  largest inputs of Booth's part, bundled from dist/ (${entry.apart.join(', ')} apart):`);
    console.log(topInputs(booth.metafile, 8).join('\n'));
    console.log('  largest source files, bundled from src/:');
    console.log(topInputs(fromSource.metafile, 15).join('\n'));
  }
}

if (over.length > 0) {
  for (const line of over) console.error(`size: ${line}`);
  process.exit(1);
}
console.log(`size: every budgeted entry is within ${budgetFile}`);
