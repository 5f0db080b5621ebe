/**
 * `npm run bench:stream`: what streaming buys, side by side in one run, against a loopback
 * provider that streams OpenAI chat-completion SSE at a fixed token rate (bench/stream-sim.ts).
 *
 * 1. Ambiguous questions (the reply is an envelope with `"ambiguous": true`, its readings, then
 *    a long answer and a confidence): non-streaming `acheck` against streaming `acheck`, time to
 *    verdict and the output tokens the provider sent before the client closed.
 * 2. Clear questions: time to the first partial answer (`onPartial` with `answerSoFar` not
 *    null) as a share of the streamed reply's time, and time to verdict, streaming against not.
 * 3. The incremental reader fed the reply in chunks of 1, 4 and 64 characters, against reading
 *    the whole text once, for replies of 1 KB to 1 MB: ns per character and the ratio.
 * 4. The issue's targets (#31), PASS or FAIL, with the figures.
 *
 * The two checks of a question (and those of the other question of its answer length) run at
 * the same time, so they see the same machine; every question is asked `--rounds` times each
 * way and each figure is the best of them (bestOf). The provider keeps its schedule by the
 * clock (a late timer sends every token then due), so a busy machine batches tokens rather
 * than slowing the reply. Times in the first two tables are wall-clock ms from the call to
 * acheck. docs/performance.md ("Streaming") says how the token rate was chosen and holds the
 * table this prints.
 *
 *   node --expose-gc --import tsx bench/stream.ts [--ms=5] [--first-token-ms=0] [--seed=31] [--rounds=3] [--lengths=50,100,200,400,800] [--no-reader]
 */
import type { AsyncCallFn } from '../src/index.js';
import { openAICompatible } from '../src/adapters/index.js';
import { bestOf, judge, type Measured, measureCheck, type Pair, questions, type Question, sseCallFn, startStreamingProvider } from './stream-sim.js';
import { readerRows } from './stream-chunks.js';

const args = new Map<string, string | undefined>(
  process.argv.slice(2).map((arg) => {
    const [key, value] = arg.replace(/^--/, '').split('=');
    return [key!, value];
  }),
);
const MS_PER_TOKEN = Number(args.get('ms') ?? 5);
const FIRST_TOKEN_MS = Number(args.get('first-token-ms') ?? 0);
const SEED = Number(args.get('seed') ?? 31);
/** Each question is asked this many times each way; every figure is the best of them. */
const ROUNDS = Number(args.get('rounds') ?? 3);
/** Answer lengths in tokens: one ambiguous and one clear question of each. */
const ANSWER_TOKENS = (args.get('lengths') ?? '50,100,200,400,800').split(',').map(Number);

const list = questions(SEED, ANSWER_TOKENS);
const byId = new Map(list.map((q) => [q.id, q]));
const provider = await startStreamingProvider({
  msPerToken: MS_PER_TOKEN,
  firstTokenMs: FIRST_TOKEN_MS,
  replyFor: (user) => {
    const id = /\[(q\d+)\]/.exec(user)?.[1];
    const q = id === undefined ? undefined : byId.get(id);
    return q === undefined ? null : { question: q.id, reply: q.reply };
  },
});

const plainCall = openAICompatible({ baseURL: provider.url, model: 'bench-model' });
/** The library's streaming adapter when it has one; else the bench's own fetch + SSE callFn. */
function streamingCall(): { call: AsyncCallFn; name: string } {
  try {
    const call = openAICompatible({ baseURL: provider.url, model: 'bench-model', stream: true });
    return { call, name: 'openAICompatible({ stream: true })' };
  } catch {
    return { call: sseCallFn(provider.url), name: "the bench's own fetch + SSE callFn (bench/stream-sim.ts)" };
  }
}
const streaming = streamingCall();

const measure = (q: Question, streamed: boolean) => measureCheck(provider, streamed ? streaming.call : plainCall, q, streamed);
const measureBoth = async (q: Question) => {
  const [plain, streamed] = await Promise.all([measure(q, false), measure(q, true)]);
  return { plain, streamed };
};

/** When the provider was to send token k (from 1), after the request reached it. */
const due = (k: number) => FIRST_TOKEN_MS + k * MS_PER_TOKEN;
const fmt = (x: number | null, digits = 0) => (x === null || !Number.isFinite(x) ? 'n/a' : x.toFixed(digits));
const pad = (s: string, width: number) => s.padStart(width);
const pct = (x: number, digits = 1) => (Number.isFinite(x) ? `${(x * 100).toFixed(digits)} %` : 'n/a');

console.log(`Booth streaming benchmark, node ${process.version}: a loopback provider (node:http, ${provider.url}) streaming`);
console.log(
  `one ~4-character token every ${MS_PER_TOKEN} ms (${fmt(1000 / MS_PER_TOKEN)} tokens/s), first token ${FIRST_TOKEN_MS} ms + ${MS_PER_TOKEN} ms after the request; seed ${SEED}`,
);
console.log(`Non-streaming: openAICompatible() (the whole completion when its last token is due). Streaming: ${streaming.name}.`);
console.log(`Each question asked ${ROUNDS} times each way; every time and token count below is the best of those rounds.`);

// Warm both paths (module loading, the first connection) on a question of its own.
const warm = questions(SEED + 1, [5]).map((q) => ({ ...q, id: 'q999', text: q.text.replace(/\[q\d+\]/, '[q999]') }));
byId.set('q999', warm[1]!);
await measureBoth(warm[1]!);

// The four checks of an answer length (both kinds, both ways) run at once: they wait on the provider, not on the CPU.
// Every question is asked in each round; each figure is the best of the rounds (bestOf).
const rounds = new Map<Question, Array<{ plain: Measured; streamed: Measured }>>(list.map((q) => [q, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  for (const length of ANSWER_TOKENS) {
    const same = list.filter((q) => q.answerTokens === length);
    const done = await Promise.all(same.map(measureBoth));
    same.forEach((q, k) => rounds.get(q)!.push(done[k]!));
  }
}
const pairs: Pair[] = list.map((q) => {
  const got = rounds.get(q)!;
  return { question: q, plain: bestOf(got.map((r) => r.plain)), streamed: bestOf(got.map((r) => r.streamed)) };
});

const ambiguous = pairs.filter((p) => p.question.kind === 'ambiguous');
const clear = pairs.filter((p) => p.question.kind === 'clear');
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

console.log('\nAmbiguous questions: the reply is `"ambiguous": true`, two to four readings, a long answer, a confidence.');
console.log('decided at: the reply\'s tokens up to the end of its readings. tokens: output tokens the provider sent before the client');
console.log('closed (what the call is billed for output). sooner: non-streaming time to verdict over streaming\'s. bound: the best');
console.log('the reply allows, deciding on the token that completes the readings and closing at once (reply over decided at, and back).');
console.log(
  `  ${'question'.padEnd(10)}${pad('answer', 7)}${pad('reply', 7)}${pad('decided at', 11)}${pad('verdict ms', 12)}${pad('tokens', 8)}  |${pad('verdict ms', 11)}${pad('tokens', 8)}${pad('sooner', 9)}${pad('tokens', 9)}  |${pad('sooner', 8)}${pad('tokens', 8)}  statuses`,
);
console.log(`  ${''.padEnd(10)}${pad('tok', 7)}${pad('tok', 7)}${pad('tok', 11)}${pad('non-streaming', 20)}  |${pad('streaming', 19)}${''.padEnd(18)}  |${pad('bound', 12)}`);
for (const { question: q, plain, streamed } of ambiguous) {
  console.log(
    `  ${q.id.padEnd(10)}${pad(String(q.answerTokens), 7)}${pad(String(q.tokens), 7)}${pad(String(q.readingsTokens), 11)}${pad(fmt(plain.verdictMs), 12)}${pad(String(plain.tokensSent), 8)}  |${pad(fmt(streamed.verdictMs), 11)}${pad(String(streamed.tokensSent), 8)}${pad(`${fmt(plain.verdictMs / streamed.verdictMs, 1)}×`, 9)}${pad(pct(streamed.tokensSent / plain.tokensSent, 0), 9)}  |${pad(`${fmt(due(q.tokens) / due(q.readingsTokens), 1)}×`, 8)}${pad(pct(q.readingsTokens / q.tokens, 0), 8)}  ${plain.status} / ${streamed.status}`,
  );
}
{
  const pv = sum(ambiguous.map((p) => p.plain.verdictMs));
  const sv = sum(ambiguous.map((p) => p.streamed.verdictMs));
  const pt = sum(ambiguous.map((p) => p.plain.tokensSent));
  const st = sum(ambiguous.map((p) => p.streamed.tokensSent));
  const rt = sum(ambiguous.map((p) => p.question.tokens));
  const dt = sum(ambiguous.map((p) => p.question.readingsTokens));
  console.log(
    `  ${'all'.padEnd(10)}${pad('', 7)}${pad(String(rt), 7)}${pad(String(dt), 11)}${pad(fmt(pv), 12)}${pad(String(pt), 8)}  |${pad(fmt(sv), 11)}${pad(String(st), 8)}${pad(`${fmt(pv / sv, 1)}×`, 9)}${pad(pct(st / pt, 0), 9)}  |${pad(`${fmt(sum(ambiguous.map((p) => due(p.question.tokens))) / sum(ambiguous.map((p) => due(p.question.readingsTokens))), 1)}×`, 8)}${pad(pct(dt / rt, 0), 8)}`,
  );
}

console.log('\nClear questions: `"ambiguous": false`, an answer, a confidence of 0.9. first answer: the first onPartial whose answerSoFar');
console.log("is not null; due: when the provider was to send the token holding the answer's first character (after the request");
console.log('reached it); chunk: when that token reached Booth; reply: the streamed reply\'s last chunk. share: first answer over reply,');
console.log("and its bound (that token's place in the reply). verdict: streaming's time to verdict over non-streaming's.");
console.log(
  `  ${'question'.padEnd(10)}${pad('answer', 7)}${pad('reply', 7)}${pad('verdict ms', 12)}  |${pad('first answer', 13)}${pad('due', 6)}${pad('chunk', 7)}${pad('reply', 7)}${pad('share', 9)}${pad('bound', 8)}${pad('verdict ms', 11)}${pad('partials', 9)}${pad('verdict', 9)}  statuses`,
);
console.log(`  ${''.padEnd(10)}${pad('tok', 7)}${pad('tok', 7)}${pad('non-stream.', 12)}  |${pad('ms', 13)}${pad('ms', 6)}${pad('ms', 7)}${pad('ms', 7)}`);
for (const { question: q, plain, streamed } of clear) {
  const answerDue = due(q.firstAnswerTokens);
  console.log(
    `  ${q.id.padEnd(10)}${pad(String(q.answerTokens), 7)}${pad(String(q.tokens), 7)}${pad(fmt(plain.verdictMs), 12)}  |${pad(fmt(streamed.firstAnswerMs), 13)}${pad(fmt(answerDue), 6)}${pad(fmt(streamed.answerChunkMs), 7)}${pad(fmt(streamed.lastChunkMs), 7)}${pad(pct((streamed.firstAnswerMs ?? Number.NaN) / (streamed.lastChunkMs ?? Number.NaN)), 9)}${pad(pct(due(q.firstAnswerTokens) / due(q.tokens)), 8)}${pad(fmt(streamed.verdictMs), 11)}${pad(String(streamed.partials), 9)}${pad(pct(streamed.verdictMs / plain.verdictMs - 1, 1), 9)}  ${plain.status} / ${streamed.status}`,
  );
}

if (!args.has('no-reader')) {
  console.log('\nThe incremental reader fed an envelope of each size in chunks, against parseReply() reading the whole text once');
  console.log('(the best of rounds, the two taking turns; ns per character of the reply, and per chunk fed; ratio: the reader\'s time');
  console.log('over the whole read\'s):');
  console.log(`  ${'reply'.padEnd(8)}${pad('chunk', 6)}${pad('chunks', 9)}${pad('whole ns/char', 15)}${pad('incremental ns/char', 21)}${pad('ns/chunk', 10)}${pad('ratio', 8)}`);
  const rows = readerRows();
  for (const row of rows) {
    console.log(
      `  ${row.label.padEnd(8)}${pad(String(row.chunk), 6)}${pad(String(row.chunks), 9)}${pad(row.wholeNsPerChar.toFixed(1), 15)}${pad(row.incrementalNsPerChar.toFixed(1), 21)}${pad(row.nsPerChunk.toFixed(0), 10)}${pad(`${row.ratio.toFixed(1)}×`, 8)}`,
    );
  }
  // A token is about four characters: the chunk a provider's stream delivers.
  const worstToken = Math.max(...rows.filter((r) => r.chunk === 4).map((r) => r.nsPerChunk));
  console.log(
    `  A streamed reply also gets parseReply's whole read at its end: the reader is the extra. At 4-character chunks (a token) it costs at most ${fmt(worstToken)} ns a chunk here, ${pct(worstToken / (MS_PER_TOKEN * 1e6), 3)} of the ${MS_PER_TOKEN} ms between tokens.`,
  );
}

console.log('\nTargets (issue #31), judged on every question: each is a property of one reply. By answer length in tokens;');
console.log('all: the same ratio of the totals over the questions of the kind.');
for (const t of judge(pairs, { msPerToken: MS_PER_TOKEN, firstTokenMs: FIRST_TOKEN_MS })) {
  const show = (x: number) =>
    !Number.isFinite(x) ? 'n/a' : t.limit === 2 ? `${x.toFixed(1)}×` : t.limit === 1.05 ? `${x >= 1 ? '+' : ''}${((x - 1) * 100).toFixed(1)} %` : pct(x);
  const limit = t.limit === 2 ? 'at least 2×' : t.limit === 1.05 ? 'at most +5 %' : `at most ${pct(t.limit, 0)}`;
  const each = t.questions.map((q) => `${q.question.answerTokens}: ${show(q.value)}${q.met ? '' : ' ✗'}`).join(', ');
  const met = t.questions.filter((q) => q.met).length;
  console.log(`  ${t.pass ? 'PASS' : 'FAIL'}  ${t.name} (${limit}): met on ${met} of ${t.questions.length}; ${each}; all ${show(t.overall)}`);
  if (t.limit !== 1.05) {
    const bounds = t.questions.map((q) => `${q.question.answerTokens}: ${show(q.bound)}`).join(', ');
    console.log(`        the replies' own bound: ${bounds}`);
  }
  if (t.detail !== '') console.log(`        ${t.detail}`);
}

await provider.close();
