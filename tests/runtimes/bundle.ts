import { readFileSync, readdirSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Message, type Plugin } from 'esbuild';

/**
 * One ES module holding every tests/portable/*.test.ts, the built package they import and
 * tests/runtimes/harness.ts in place of 'vitest', for runtimes that are not Node: it imports
 * nothing, and exports `run()`. The tests' 'boothjs/...' imports resolve as a user's would,
 * through the exports of the package.json they sit under, to dist/: run `npm run build` first.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PORTABLE = join(root, 'tests', 'portable');
const HARNESS = join(root, 'tests', 'runtimes', 'harness.ts');
/** The bundle's file name in the folder it is written to. */
export const BUNDLE = 'portable.js';

/** A test file's name before its import in the entry: the harness names its tests after it. */
const FILE_MARK = 'portable-file:';

const portableFiles: Plugin = {
  name: 'portable-files',
  setup(builder) {
    // The package.json says `"sideEffects": false`, which would let esbuild drop the test files' imports: their side effect is registering the tests.
    builder.onResolve({ filter: /^\.\/.*\.test\.ts$/ }, ({ path, resolveDir }) => ({ path: join(resolveDir, path), sideEffects: true }));
    builder.onResolve({ filter: new RegExp(`^${FILE_MARK}`) }, ({ path }) => ({ path: path.slice(FILE_MARK.length), namespace: 'portable-file' }));
    builder.onLoad({ filter: /.*/, namespace: 'portable-file' }, ({ path }) => ({
      contents: `import { enterFile } from 'vitest';\nenterFile(${JSON.stringify(path)});\n`,
      resolveDir: root,
      loader: 'js',
    }));
  },
};

/**
 * The harness reports plain text. tinyrainbow, which colours @vitest/expect's messages, looks
 * for a terminal when it loads: it reads process.env, which Deno refuses without --allow-env
 * (and the tests run with no permission), and it colours in Chromium. Its `isSupported` is made
 * to answer no; the build fails if tinyrainbow no longer has one to find.
 */
const plainMessages: Plugin = {
  name: 'plain-messages',
  setup(builder) {
    builder.onLoad({ filter: /[\\/]node_modules[\\/]tinyrainbow[\\/]dist[\\/]index\.js$/ }, ({ path }) => {
      const source = readFileSync(path, 'utf8');
      const name = /\b(\w+) as isSupported\b/.exec(source)?.[1];
      const start = `function ${name}() {`;
      if (name === undefined || !source.includes(start)) throw new Error(`${path}: no isSupported() to turn colours off with`);
      return { contents: source.replace(start, `${start} return false;`), loader: 'js' };
    });
  },
};

/** esbuild's own words for each error, where it was, and first, which Node built-ins were imported. */
function buildFailure(errors: readonly Message[]): Error {
  const builtins = new Set<string>();
  const lines = errors.map((error) => {
    const unresolved = /^Could not resolve "(.+)"$/.exec(error.text)?.[1];
    if (unresolved !== undefined && isBuiltin(unresolved)) builtins.add(unresolved);
    const where = error.location ? `${error.location.file}:${error.location.line}: ` : '';
    return `  ${where}${error.text}`;
  });
  const head = builtins.size > 0 ? `The portable tests' bundle imports Node built-ins: ${[...builtins].join(', ')}.` : "The portable tests' bundle does not build.";
  return new Error(`${head}\n${lines.join('\n')}`);
}

/** The test files, in a fixed order; none is an error, since every runtime would then pass nothing. */
export function portableTestFiles(): string[] {
  const files = readdirSync(PORTABLE).filter((name) => name.endsWith('.test.ts')).sort();
  if (files.length === 0) throw new Error(`No *.test.ts in ${PORTABLE}`);
  return files;
}

/** Writes the bundle to `outDir`/portable.js and returns its path. */
export async function bundlePortableTests(outDir: string): Promise<string> {
  const entry = [
    "export { run } from 'vitest';",
    ...portableTestFiles().flatMap((file) => [`import ${JSON.stringify(FILE_MARK + file)};`, `import ${JSON.stringify(`./${file}`)};`]),
  ].join('\n');
  const outfile = join(outDir, BUNDLE);
  const result = await build({
    stdin: { contents: entry, resolveDir: PORTABLE, sourcefile: 'portable-entry.js', loader: 'js' },
    bundle: true,
    // 'browser': no Node built-in resolves, and packages' browser builds are taken, as a browser app's bundler would.
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    alias: { vitest: HARNESS },
    plugins: [portableFiles, plainMessages],
    outfile,
    metafile: true,
    // Its errors are thrown, and say which Node built-ins were asked for.
    logLevel: 'silent',
    absWorkingDir: root,
  }).catch((error: unknown) => {
    const errors = (error as { errors?: readonly Message[] }).errors;
    throw errors ? buildFailure(errors) : error;
  });
  // Nothing may be left for the runtime to import: not a built-in, not a package.
  const leftOut = Object.values(result.metafile.outputs).flatMap((output) => output.imports.map((imported) => imported.path));
  if (leftOut.length > 0) throw new Error(`The portable tests' bundle still imports ${leftOut.join(', ')}`);
  return outfile;
}
