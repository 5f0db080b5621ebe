/**
 * `npm run bench:scale` (and the end of `npm run bench`): questions per second of a queued
 * batch with 1, 2 and 4 `booth worker` processes, on a loopback model that answers every
 * call after a fixed 50 ms, through a redis-server of its own. Near-linear scaling is the
 * target: at least 3.2× the single worker's rate with 4.
 *
 * The rate is the questions over the span of the model's calls, from the first call to the
 * last answer: what the workers achieve, without the seconds each process takes to start.
 */
import { spawnBooth } from '../tests/fixtures/booth-process.js';
import { startProvider } from '../tests/fixtures/provider-server.js';
import { startRedis } from '../tests/fixtures/redis-server.js';
import { envelope } from '../tests/fixtures/helpers.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const MODEL_MS = 50;
const QUESTIONS = 800;
const CONCURRENCY = 4;

const redis = await startRedis();
const provider = await startProvider();
provider.fallback = () => ({ text: envelope('yes', 0.9), delayMs: MODEL_MS });
const work = mkdtempSync(join(tmpdir(), 'booth-scale-'));
const input = join(work, 'questions.jsonl');
writeFileSync(input, Array.from({ length: QUESTIONS }, (_, i) => JSON.stringify({ id: i, prompt: `question ${i}` })).join('\n'));

async function questionsPerSecond(workers: number): Promise<number> {
  const run = `scale-${workers}`;
  const endpoint = ['--base-url', `${provider.url}/v1`, '--model', 'm', '--max-retries', '0', '--concurrency', String(CONCURRENCY)];
  const started = Array.from({ length: workers }, () => {
    const worker = spawnBooth(['worker', '--queue', redis.url, '--name', run, ...endpoint]);
    return { ...worker, ready: async () => { while (!worker.said().includes('booth worker: checking run')) await sleep(20); } };
  });
  await Promise.all(started.map((w) => w.ready()));
  provider.received.length = 0;
  const batch = await spawnBooth(['batch', input, '--queue', redis.url, '--name', run, '-o', join(work, `${run}.jsonl`)]).done;
  if (batch.code !== 0) throw new Error(`batch failed: ${batch.stderr}`);
  for (const w of started) w.child.kill('SIGTERM');
  await Promise.all(started.map((w) => w.done));
  const times = provider.received.map((r) => r.at);
  const seconds = (Math.max(...times) + MODEL_MS - Math.min(...times)) / 1000;
  return QUESTIONS / seconds;
}

console.log(`\nQueued batch (booth batch --queue, booth worker --concurrency ${CONCURRENCY}): ${QUESTIONS} questions, a model answering in ${MODEL_MS} ms`);
let single = 0;
for (const workers of [1, 2, 4]) {
  const rate = await questionsPerSecond(workers);
  if (workers === 1) single = rate;
  const ideal = (workers * CONCURRENCY * 1000) / MODEL_MS;
  console.log(`  ${workers} worker${workers === 1 ? ' ' : 's'}  ${rate.toFixed(0).padStart(5)} questions/s  ${(rate / single).toFixed(2)}× one worker  (the model allows ${ideal})`);
}
await provider.close();
await redis.close();
