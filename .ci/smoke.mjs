// The built package loads both ways, and the machine exists once per format.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const esm = await import('../dist/index.js');
const cjs = require('../dist/index.cjs');
const { checkpointMachine } = await import('../dist/machine.js');

for (const [name, booth] of [['esm', esm], ['cjs', cjs]]) {
  const result = booth.check(() => '{"answer": "4", "confidence": 0.9}', 'What is 2 + 2?');
  if (result.status !== booth.VERIFIED || result.answer !== '4') throw new Error(`${name} build: unexpected ${result.status}`);
}
if (checkpointMachine.id !== 'checkpoint') throw new Error('machine entry point is broken');
console.log('smoke: esm and cjs builds run a check; the machine entry point loads');

const visualize = await import('../dist/visualize.js');
const visualizeCjs = require('../dist/visualize.cjs');
for (const [name, v] of [['esm', visualize], ['cjs', visualizeCjs]]) {
  const result = esm.check(() => 'no json', 'q', { maxRetries: 0 });
  const html = await v.toHtml(result);
  if (!html.includes('>UNCERTAIN</h1>') || !html.includes('<svg')) throw new Error(`${name} visualize build is broken`);
}
console.log('smoke: esm and cjs visualize builds draw a run');

const testing = await import('../dist/testing.js');
const adapters = require('../dist/adapters.cjs');
const scripted = testing.scriptedModel([testing.envelope('4', 0.9)]);
if (esm.check(scripted.sync, 'q').answer !== '4') throw new Error('testing entry point is broken');
if (typeof adapters.openAICompatible !== 'function') throw new Error('adapters entry point is broken');
console.log('smoke: the testing and adapters entry points load');

// boothjs/redis loads from the build and makes a store from any client with Redis's get, set and del.
const redis = await import('../dist/redis.js');
const redisCjs = require('../dist/redis.cjs');
const client = { get: async () => null, set: async () => 'OK', del: async () => 0 };
for (const [name, r] of [['esm', redis], ['cjs', redisCjs]]) {
  const store = r.redisStore(client, { prefix: 'smoke:' });
  if (store.locate('k') !== 'redis key smoke:k' || (await store.load('k')) !== undefined) throw new Error(`${name} redis build is broken`);
}
console.log('smoke: esm and cjs redis entry points load and make a store');

// boothjs/node (the file store) loads from both builds and runs a durable check; boothjs no longer has it.
const { mkdtempSync, rmSync } = await import('node:fs');
const { tmpdir } = await import('node:os');
const { join } = await import('node:path');
const node = await import('../dist/node.js');
const nodeCjs = require('../dist/node.cjs');
for (const [name, n] of [['esm', node], ['cjs', nodeCjs]]) {
  const dir = mkdtempSync(join(tmpdir(), 'booth-smoke-'));
  try {
    const store = n.fileStore(dir);
    const result = await esm.acheck(testing.scriptedModel([testing.envelope('4', 0.9)]).async, 'q', { checkpoint: store, key: 'k' });
    if (result.answer !== '4' || store.locate('k') !== join(dir, 'k.json')) throw new Error(`${name} node build is broken`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
if ('fileStore' in esm || 'fileStore' in cjs) throw new Error('fileStore belongs to boothjs/node, not boothjs');
console.log('smoke: esm and cjs node entry points load and run a durable check with a file store');
