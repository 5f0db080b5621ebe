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
