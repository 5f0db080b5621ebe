/**
 * `npm run bench`: Booth's cost, measured side by side in one run.
 *
 * 1. Per-check time of check() and acheck() on the compiled stepper, and of check() on
 *    XState's actor, next to a tight hand-written loop making the same decisions with
 *    JSON.parse, and the same loop over Booth's own reader and prompt builders.
 * 2. Parse time of 10 KB, 1 MB and 10 MB replies (should grow linearly).
 * 3. Typical replies, and the worst reply shapes (2 and 10 MB), against JSON.parse
 *    (bench/reader.ts, which also runs alone).
 * 4. Heap bytes per in-flight acheck() with 10 000 pending.
 * 5. A check with telemetry off, and on (OpenTelemetry's no-op tracer; a recording SDK tracer).
 *
 * Figures are best-of-rounds on a shared machine, the contenders of each comparison taking
 * turns round by round: trust the ratios more than the times.
 */
import { attemptFromReply, type Attempt } from '../src/decide/attempt.js';
import { forceEngine } from '../src/engine/engines.js';
import { acheck, check } from '../src/index.js';
import { parseReply } from '../src/reply/parse.js';
import { firstPrompt, INSTRUCTIONS, type RetryKind, retryPrompt } from '../src/decide/prompts.js';
import { envelope } from '../tests/fixtures/helpers.js';
import { bestMicrosSideBySide, readerRows, typicalRows } from './reader.js';
import type { Tracer } from '@opentelemetry/api';
import { BasicTracerProvider, NoopSpanProcessor } from '@opentelemetry/sdk-trace-base';

const SCENARIOS = {
  verified: { replies: [envelope('Paris', 0.9)], maxRetries: 1 },
  repaired: { replies: [envelope('Paris', 0.3), envelope('Paris', 0.9)], maxRetries: 1 },
  // What unparseable model output usually is: JSON that is almost right.
  'uncertain, malformed': {
    replies: [
      '{"answer": "Paris", "confidence": 0.9,}',
      "{'answer': 'Paris', 'confidence': 0.9}",
      '{"answer": "Paris", "confidence": high}',
    ],
    maxRetries: 2,
  },
  // The cheapest case for the tight loop: no brace, so it never even calls JSON.parse.
  'uncertain, prose': { replies: ['I believe it is Paris.', 'Paris, probably.', 'I cannot answer in JSON.'], maxRetries: 2 },
} as const;

type Scenario = (typeof SCENARIOS)[keyof typeof SCENARIOS];

/**
 * The tight baseline: the same decisions as plainly as JavaScript allows: JSON.parse on
 * the trimmed reply, the three checks that matter, string concatenation for prompts.
 */
function tightLoop(call: (prompt: string) => string, question: string, threshold: number, maxRetries: number) {
  const attempts: Array<{ answer: string | null; confidence: number | null }> = [];
  let prompt = `${question}\n\n${INSTRUCTIONS}`;
  for (let index = 0; ; index += 1) {
    let reply: { answer?: unknown; confidence?: unknown; ambiguous?: unknown } | null = null;
    const text = call(prompt).trim();
    // Only text that can be an object goes to JSON.parse: a throw per bad reply would swamp the loop.
    if (text.startsWith('{') && text.endsWith('}')) {
      try {
        reply = JSON.parse(text);
      } catch {
        reply = null;
      }
    }
    const parsed = reply !== null && typeof reply.answer === 'string' && typeof reply.confidence === 'number';
    attempts.push(parsed ? { answer: reply?.answer as string, confidence: reply?.confidence as number } : { answer: null, confidence: null });
    if (parsed && reply?.ambiguous === true) return { status: 'AMBIGUOUS', attempts };
    if (parsed && (reply?.confidence as number) >= threshold) return { status: index === 0 ? 'VERIFIED' : 'REPAIRED', attempts };
    if (index >= maxRetries) return { status: 'UNCERTAIN', attempts };
    prompt = parsed
      ? `${question}\n\nYour previous answer was ${JSON.stringify(reply?.answer)}, with confidence ${reply?.confidence}. Reconsider your previous answer.\n\n${INSTRUCTIONS}`
      : `${question}\n\nYour previous response could not be parsed. Reply with the JSON object only.\n\n${INSTRUCTIONS}`;
  }
}

/** The same-helpers baseline: the decisions as a plain loop over Booth's own parser and prompt builders. */
function handLoop(call: (prompt: string) => string, question: string, threshold: number, maxRetries: number) {
  const attempts: Attempt<unknown>[] = [];
  let prompt = firstPrompt(question);
  for (let index = 0; ; index += 1) {
    const attempt = attemptFromReply(call(prompt), []);
    attempts.push(attempt);
    if (attempt.parseOk && attempt.ambiguous) return { status: 'AMBIGUOUS', attempts };
    if (attempt.parseOk && (attempt.confidence ?? 0) >= threshold) {
      return { status: index === 0 ? 'VERIFIED' : 'REPAIRED', attempts };
    }
    if (index >= maxRetries) return { status: 'UNCERTAIN', attempts };
    const kind: RetryKind = attempt.parseOk ? 'confidence' : 'parse';
    prompt = retryPrompt(question, kind, attempt);
  }
}

function replier(replies: readonly string[]) {
  let next = 0;
  return {
    reset: () => {
      next = 0;
    },
    call: (_prompt: string) => replies[next++ % replies.length] ?? '',
  };
}

async function microsAsync(iterations: number, body: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i += 1) await body();
  return Number(process.hrtime.bigint() - start) / 1e3 / iterations;
}

async function perCheck(name: string, scenario: Scenario) {
  const model = replier(scenario.replies);
  const options = { maxRetries: scenario.maxRetries };
  const question = 'What is the capital of France?';
  const tight = () => {
    model.reset();
    tightLoop(model.call, question, 0.7, scenario.maxRetries);
  };
  const loop = () => {
    model.reset();
    handLoop(model.call, question, 0.7, scenario.maxRetries);
  };
  const sync = () => {
    model.reset();
    check(model.call, question, options);
  };
  const async = () => {
    model.reset();
    return acheck(model.call, question, options);
  };
  const onEngine = <T>(engine: 'stepper' | 'actor', body: () => T) => () => {
    forceEngine(engine);
    try {
      return body();
    } finally {
      forceEngine(null);
    }
  };
  const syncActor = onEngine('actor', sync);
  // Warm up every contender before timing any, so the JIT treats them alike.
  for (let i = 0; i < 2_000; i += 1) {
    tight();
    loop();
    sync();
    syncActor();
    await async();
  }
  // Best of 5 rounds, every contender timed in each round: see bestMicrosSideBySide.
  const best = { tightUs: Infinity, loopUs: Infinity, syncUs: Infinity, actorUs: Infinity, asyncUs: Infinity };
  for (let round = 0; round < 5; round += 1) {
    const [tightUs, loopUs, syncUs, actorUs] = bestMicrosSideBySide(
      1,
      [
        { iterations: 200_000, body: tight },
        { iterations: 50_000, body: loop },
        { iterations: 50_000, body: sync },
        { iterations: 5_000, body: syncActor },
      ],
      false,
    );
    best.tightUs = Math.min(best.tightUs, tightUs!);
    best.loopUs = Math.min(best.loopUs, loopUs!);
    best.syncUs = Math.min(best.syncUs, syncUs!);
    best.actorUs = Math.min(best.actorUs, actorUs!);
    best.asyncUs = Math.min(best.asyncUs, await microsAsync(50_000, async));
  }
  return { name, ...best };
}

function proseReply(bytes: number): string {
  const line = 'The model thinks out loud {here: not json} and weighs {"partial": [1, 2,} options.\n';
  const body = line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes);
  // The envelope sits mid-line with prose after it, so neither the whole reply nor its
  // last line is the object: the parser has to walk every brace.
  return `${body}Final: ${envelope('Paris', 0.9)} -- done.`;
}

function parseTimes() {
  const sizes = [10_000, 1_000_000, 10_000_000];
  const contenders = sizes.map((bytes) => {
    const reply = proseReply(bytes);
    if (!parseReply(reply).ok) throw new Error('benchmark reply did not parse');
    return { iterations: bytes >= 10_000_000 ? 3 : bytes >= 1_000_000 ? 10 : 500, body: () => parseReply(reply) };
  });
  return bestMicrosSideBySide(5, contenders, false).map((micros, k) => ({ bytes: sizes[k]!, ms: micros / 1e3 }));
}

async function heapPerPendingCheck(count: number): Promise<number> {
  const gc = globalThis.gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const releases: Array<(text: string) => void> = [];
  const call = () => new Promise<string>((resolve) => releases.push(resolve));
  gc();
  const before = process.memoryUsage().heapUsed;
  const pending = Array.from({ length: count }, (_, i) => acheck(call, `question ${i}`));
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  const after = process.memoryUsage().heapUsed;
  for (const release of releases) release(envelope('Paris', 0.9));
  const results = await Promise.all(pending);
  if (results.some((r) => r.status !== 'VERIFIED')) throw new Error('pending checks did not verify');
  return (after - before) / count;
}

const fmt = (n: number, digits = 1) => n.toFixed(digits).padStart(9);

console.log('Booth benchmark', process.version, '\n');
console.log('Per check, µs (best of 5 rounds). loop: a tight hand-written loop with JSON.parse; helpers: the same');
console.log("decisions over Booth's own reader and prompts; check() and acheck() on the compiled stepper, check() on");
console.log("XState's actor (the engine of inspected runs); ×: ratio to the loop");
console.log(`  ${'scenario'.padEnd(20)}${'loop'.padStart(8)}${'helpers'.padStart(9)}${'check()'.padStart(9)}${'×'.padStart(6)}${'acheck()'.padStart(10)}${'×'.padStart(6)}${'actor'.padStart(9)}${'×'.padStart(7)}`);
for (const [name, scenario] of Object.entries(SCENARIOS)) {
  const r = await perCheck(name, scenario);
  const cells: Array<[number, number, number]> = [
    [r.tightUs, 8, 2],
    [r.loopUs, 9, 2],
    [r.syncUs, 9, 2],
    [r.syncUs / r.tightUs, 6, 1],
    [r.asyncUs, 10, 2],
    [r.asyncUs / r.tightUs, 6, 1],
    [r.actorUs, 9, 1],
    [r.actorUs / r.tightUs, 7, 0],
  ];
  console.log(`  ${name.padEnd(20)}${cells.map(([value, width, digits]) => value.toFixed(digits).padStart(width)).join('')}`);
}

// Inspection runs on XState's actor, and is attached only when asked for.
{
  const model = replier(SCENARIOS.repaired.replies);
  const run = (inspect?: () => void) => {
    model.reset();
    check(model.call, 'What is the capital of France?', inspect ? { inspect } : {});
  };
  const onActor = () => {
    forceEngine('actor');
    run();
    forceEngine(null);
  };
  for (let i = 0; i < 2_000; i += 1) {
    onActor();
    run(() => {});
  }
  const [actor, inspected] = bestMicrosSideBySide(
    5,
    [
      { iterations: 5_000, body: onActor },
      { iterations: 5_000, body: () => run(() => {}) },
    ],
    false,
  ) as [number, number];
  console.log(`\ncheck(), repaired, on the actor, µs: without inspect ${actor.toFixed(1)}, with a no-op inspect observer ${inspected.toFixed(1)} (${(inspected / actor).toFixed(2)}×)`);
}

// Telemetry is off unless asked for; on, a check pays for its spans: with OpenTelemetry's global
// no-op tracer (no SDK registered), and with a recording SDK tracer whose spans are dropped on end.
{
  const model = replier(SCENARIOS.repaired.replies);
  const recording = new BasicTracerProvider({ spanProcessors: [new NoopSpanProcessor()] }).getTracer('bench');
  const run = (telemetry?: { tracer: Tracer } | true) => () => {
    model.reset();
    check(model.call, 'What is the capital of France?', telemetry ? { telemetry } : {});
  };
  const [off, noop, sdk] = [run(), run(true), run({ tracer: recording })];
  for (let i = 0; i < 2_000; i += 1) {
    off();
    noop();
    sdk();
  }
  const [offUs, noopUs, sdkUs] = bestMicrosSideBySide(5, [off, noop, sdk].map((body) => ({ iterations: 20_000, body })), false) as [number, number, number];
  console.log(
    `\ncheck(), repaired, µs: telemetry off ${offUs.toFixed(2)}, on with the no-op global tracer ${noopUs.toFixed(2)} (${(noopUs / offUs).toFixed(1)}×), on with a recording SDK tracer ${sdkUs.toFixed(2)} (${(sdkUs / offUs).toFixed(1)}×)`,
  );
}

console.log('\nParse time of a prose reply with the envelope buried mid-line');
const parses = parseTimes();
for (const { bytes, ms } of parses) console.log(`  ${String(bytes).padStart(10)} bytes ${fmt(ms, 2)} ms`);
const [, oneMb, tenMb] = parses;
if (oneMb && tenMb) console.log(`  10 MB / 1 MB: ${(tenMb.ms / oneMb.ms).toFixed(1)}× (linear is 10×)`);

console.log('\nTypical replies, µs per call: parseReply against JSON.parse (which throws on almost-JSON)');
for (const row of typicalRows()) console.log(`  ${row.name.padEnd(28)}${fmt(row.parseReplyUs, 2)}${fmt(row.jsonParseUs, 2)}`);

for (const size of [2_000_000, 10_000_000]) {
  console.log(`\nWorst reply shapes, ${size / 1e6} MB each, against JSON.parse of a valid document of that size`);
  for (const { name, ms, ratio } of readerRows(size)) console.log(`  ${name.padEnd(36)}${fmt(ms, 1)} ms ${fmt(ratio, 1)}× JSON.parse`);
}

const perPending = await heapPerPendingCheck(10_000);
console.log(`\nHeap per in-flight acheck() with 10 000 pending: ${Math.round(perPending)} bytes`);
