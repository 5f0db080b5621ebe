// @ts-check
/**
 * The house rules for imports (`npm run check:imports`, part of `npm test`): no cycles, type-only
 * imports included, and every import goes down this list or stays in its own room. dependency-
 * cruiser rather than a script of our own: it resolves TypeScript's `.js` specifiers and type-only
 * imports as tsc does, and says which rule an import breaks and where.
 */
const LAYERS = [
  ['util', '^src/util/'], // small helpers with no Booth knowledge: values, URLs, timers, optional peers
  ['reply', '^src/reply/'], // reading the model's reply: the JSON object reader and the envelope rules
  ['decide', '^src/decide/'], // the pure helpers the machine calls: attempts, prompts, schema, votes, retries, usage
  ['options', '^src/options/'], // reading options: the rules every entry point shares, and the machine's input
  ['machines', '^machines/'], // the XState machines: every decision
  ['results', '^src/results/'], // the result of a run, built from the machine's output and read back from storage
  ['stores', '^src/stores/'], // where durable runs are kept: memory, files, Redis, signed
  ['telemetry', '^src/telemetry/'], // OpenTelemetry spans that watch a run
  ['engine', '^src/engine/'], // running the machine: the compiled stepper, the XState actor, the run that yields needs
  ['api', '^src/api/'], // check(), acheck(), checkWithEvidence() and their options
  ['adapters', '^src/adapters/'], // providers' HTTP APIs as a callFn
  ['faces', '^src/(testing|visualize)/'], // the test kit and the diagrams and pages
  ['entries', '^src/(index\\.ts|cli/)'], // the package's front and the `booth` command
];

/** The files of the `boothjs/node` entry: the file store and what only it uses. */
const NODE_ONLY = '^src/stores/(node|file-store|atomic-file)[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-cycle', severity: 'error', comment: 'An import cycle, type-only imports included.', from: {}, to: { circular: true } },
    // A relative import that leads nowhere (the optional peers, such as vega-lite, may be absent).
    { name: 'no-unresolvable', severity: 'error', from: {}, to: { couldNotResolve: true, path: '^[.]' } },
    // Everything but the command and boothjs/node runs in browsers, edge runtimes and Workers
    // (see docs/runtimes.md): no Node built-in, and no import of the Node-only files that use them.
    {
      name: 'portable-imports-no-node',
      severity: 'error',
      comment: 'Only src/cli/ and the boothjs/node entry (its file store) may use Node built-ins; the rest runs wherever JavaScript runs.',
      from: { path: '^(src|machines)/', pathNot: [NODE_ONLY, '^src/cli/'] },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'portable-stays-off-node-files',
      severity: 'error',
      comment: 'A portable module that imports a Node-only one would carry its Node built-ins along.',
      from: { path: '^(src|machines)/', pathNot: [NODE_ONLY, '^src/cli/'] },
      to: { path: NODE_ONLY },
    },
    // The top layer has nothing above it to forbid.
    ...LAYERS.slice(0, -1).map(([name, path], index) => ({
      name: `${name}-imports-downward`,
      severity: /** @type {const} */ ('error'),
      comment: `${path} may import only from its own folder and the layers below it.`,
      from: { path },
      to: { path: LAYERS.slice(index + 1).map(([, above]) => above) },
    })),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a cycle through types is still a cycle a reader must untangle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
