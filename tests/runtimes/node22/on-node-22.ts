/*
 * Loaded in each vitest worker before a test file: the run is on Node 22 only if the workers
 * are, and a `node` found first on some PATH would make it another Node's run.
 */
if (!process.versions.node.startsWith('22.')) {
  throw new Error(`npm run test:node22 must run on Node 22, but this worker runs Node ${process.version} (${process.execPath}).`);
}
