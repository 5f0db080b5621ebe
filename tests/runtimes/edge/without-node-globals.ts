/*
 * vitest puts Node's `process`, `Buffer`, `setImmediate`, `clearImmediate` and `global` into
 * the edge VM's global object for its own runner; the Edge Runtime has none of them. Taken
 * away before each test file is loaded, a Booth module that touches one fails here as it
 * would on the edge, instead of passing on Node's. (vitest keeps its own references.)
 */
for (const name of ['process', 'Buffer', 'setImmediate', 'clearImmediate', 'global']) {
  Reflect.deleteProperty(globalThis, name);
}
