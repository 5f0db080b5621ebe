import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseReply } from '../../src/reply/parse.js';
import { openAICompatible } from '../../src/adapters/index.js';
import {
  bestOf,
  judge,
  type Measured,
  measureCheck,
  type Pair,
  questions,
  sseContent,
  sseEvent,
  startStreamingProvider,
  type StreamingProvider,
  tokensOf,
} from '../../bench/stream-sim.js';
import { chunksOf, readIncrementally, replyOfSize } from '../../bench/stream-chunks.js';

/**
 * What `npm run bench:stream` measures on (bench/stream-sim.ts), without its timings: the
 * questions and their replies, the provider's ledger, the SSE reading, and the arithmetic of
 * the targets, so the bench cannot rot unnoticed.
 */

const bytes = (text: string) => new TextEncoder().encode(text);
const streamOf = (parts: readonly Uint8Array[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });

async function collect(chunks: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of chunks) out.push(chunk);
  return out;
}

describe('the stream bench simulation', () => {
  it('cuts a reply into tokens of four code points, never inside a surrogate pair', () => {
    expect(tokensOf('abcdefghij')).toEqual(['abcd', 'efgh', 'ij']);
    expect(tokensOf('')).toEqual([]);
    const emoji = 'ab😀cdé😀fg';
    expect(tokensOf(emoji).join('')).toBe(emoji);
    expect(tokensOf(emoji)).toEqual(['ab😀c', 'dé😀f', 'g']);
  });

  it('builds the same questions for a seed, each reply an envelope Booth reads as its kind', () => {
    const list = questions(31, [50, 400]);
    expect(questions(31, [50, 400])).toEqual(list);
    expect(questions(32, [50, 400]).map((q) => q.reply)).not.toEqual(list.map((q) => q.reply));
    expect(list.map((q) => q.kind)).toEqual(['ambiguous', 'ambiguous', 'clear', 'clear']);
    for (const q of list) {
      expect(q.text).toContain(`[${q.id}]`);
      const reading = parseReply(q.reply);
      if (!reading.ok) throw new Error(reading.error);
      expect(reading.ambiguous).toBe(q.kind === 'ambiguous');
      expect(reading.interpretations.length).toBe(q.kind === 'ambiguous' ? reading.interpretations.length : 0);
      if (q.kind === 'ambiguous') expect(reading.interpretations.length).toBeGreaterThanOrEqual(2);
      expect(Math.abs(tokensOf(reading.answer).length - q.answerTokens)).toBeLessThanOrEqual(1);
      expect(q.tokens).toBe(tokensOf(q.reply).length);
      // Where each decision can be made, in tokens: the readings end before the answer starts, which is before the end.
      const shown = q.reply.slice(0, q.readingsTokens * 4);
      expect(shown.includes(']')).toBe(true);
      expect(q.reply.slice(0, (q.readingsTokens - 1) * 4).includes(']')).toBe(false);
      const answerAt = q.reply.indexOf('"answer": "') + '"answer": "'.length;
      expect(q.answerAt).toBe(answerAt);
      expect(q.reply.slice(0, q.firstAnswerTokens * 4).length).toBeGreaterThan(answerAt);
      expect(q.reply.slice(0, (q.firstAnswerTokens - 1) * 4).length).toBeLessThanOrEqual(answerAt);
      expect(q.readingsTokens).toBeLessThan(q.firstAnswerTokens);
      expect(q.firstAnswerTokens).toBeLessThan(q.tokens - q.answerTokens + 5);
    }
  });

  it('builds reader replies of the size asked, which parseReply accepts', () => {
    for (const size of [1_000, 100_000]) {
      const reply = replyOfSize(size);
      expect(Math.abs(reply.length - size)).toBeLessThan(8);
      expect(parseReply(reply).ok).toBe(true);
    }
  });

  it('feeds the reader bench its reply in chunks that rebuild it, the reader ending with the whole answer', () => {
    const reply = replyOfSize(2_000);
    const reading = parseReply(reply);
    if (!reading.ok) throw new Error(reading.error);
    for (const size of [1, 4, 64]) {
      const chunks = chunksOf(reply, size);
      expect(chunks.join('')).toBe(reply);
      expect(chunks.every((c, k) => c.length === size || k === chunks.length - 1)).toBe(true);
      const reader = readIncrementally(chunks);
      expect(reader.ambiguous).toBe(false);
      expect(reader.interpretations).toEqual([]);
      expect(reader.answerSoFar).toBe(reading.answer);
      expect(reader.text).toBe(reply);
    }
  });

  it('reads content deltas and usage out of an SSE body, however it is split', async () => {
    const body =
      sseEvent({ choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }) +
      sseEvent({ choices: [{ index: 0, delta: { content: '{"ans' } }] }) +
      ': a comment line\n\n' +
      sseEvent({ choices: [{ index: 0, delta: { content: 'wer": "é😀"}' } }] }).replaceAll('\n', '\r\n') +
      sseEvent({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } }) +
      'data: [DONE]\n\n' +
      sseEvent({ choices: [{ index: 0, delta: { content: 'after done' } }] });
    const encoded = bytes(body);
    for (const size of [1, 3, encoded.length]) {
      const parts: Uint8Array[] = [];
      for (let k = 0; k < encoded.length; k += size) parts.push(encoded.slice(k, k + size));
      const usages: unknown[] = [];
      expect(await collect(sseContent(streamOf(parts), (u) => usages.push(u)))).toEqual(['{"ans', 'wer": "é😀"}']);
      expect(usages).toEqual([{ prompt_tokens: 3, completion_tokens: 4 }]);
    }
  });
});

describe('the loopback provider', () => {
  const list = questions(7, [60]);
  let provider: StreamingProvider;
  beforeAll(async () => {
    provider = await startStreamingProvider({
      msPerToken: 1,
      replyFor: (user) => {
        const q = list.find((x) => user.includes(`[${x.id}]`));
        return q ? { question: q.id, reply: q.reply } : null;
      },
    });
  });
  afterAll(() => provider.close());

  const post = (body: object, signal?: AbortSignal) =>
    fetch(`${provider.url}/chat/completions`, { method: 'POST', body: JSON.stringify(body), ...(signal ? { signal } : {}) });

  it('streams the whole reply, token by token, and bills every token', async () => {
    const q = list[0]!;
    const response = await post({ stream: true, messages: [{ role: 'user', content: q.text }] });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const usages: Array<Record<string, unknown>> = [];
    const chunks = await collect(sseContent(response.body!, (u) => usages.push(u)));
    expect(chunks.join('')).toBe(q.reply);
    expect(chunks).toEqual(tokensOf(q.reply));
    expect(usages[0]?.['completion_tokens']).toBe(q.tokens);
    const served = provider.served.at(-1)!;
    expect(served).toMatchObject({ question: q.id, stream: true, tokens: q.tokens, sent: q.tokens, closedEarly: false });
  });

  it('answers a request that does not stream with the whole completion, all of it billed', async () => {
    const q = list[1]!;
    const response = await post({ messages: [{ role: 'user', content: q.text }] });
    const completion = (await response.json()) as { choices: Array<{ message: { content: string } }>; usage: { completion_tokens: number } };
    expect(completion.choices[0]!.message.content).toBe(q.reply);
    expect(completion.usage.completion_tokens).toBe(q.tokens);
    expect(provider.served.at(-1)).toMatchObject({ question: q.id, stream: false, sent: q.tokens, closedEarly: false });
  });

  it('stops sending, and stops billing, when the client closes', async () => {
    const q = list[0]!;
    const aborter = new AbortController();
    const response = await post({ stream: true, messages: [{ role: 'user', content: q.text }] }, aborter.signal);
    let seen = 0;
    for await (const _ of sseContent(response.body!, () => undefined)) {
      seen += 1;
      if (seen === 5) {
        aborter.abort();
        break;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    const served = provider.served.at(-1)!;
    expect(served.closedEarly).toBe(true);
    expect(served.sent).toBeGreaterThanOrEqual(5);
    expect(served.sent).toBeLessThan(q.tokens);
  });

  it('answers 404 to a question it does not know', async () => {
    expect((await post({ messages: [{ role: 'user', content: 'no id here' }] })).status).toBe(404);
  });
});

describe('the comparison, through acheck and the adapter', () => {
  // One ambiguous and one clear question with 300-token answers, at 2 ms a token: about a second each.
  const list = questions(3, [300]);
  let provider: StreamingProvider;
  beforeAll(async () => {
    provider = await startStreamingProvider({
      msPerToken: 2,
      replyFor: (user) => {
        const q = list.find((x) => user.includes(`[${x.id}]`));
        return q ? { question: q.id, reply: q.reply } : null;
      },
    });
  });
  afterAll(() => provider.close());

  it('reaches the same verdicts both ways; streaming pays for the ambiguous reply only up to its readings, and shows the clear answer as it comes', async () => {
    const plain = openAICompatible({ baseURL: provider.url, model: 'bench-model' });
    const streaming = openAICompatible({ baseURL: provider.url, model: 'bench-model', stream: true });
    const pairs: Pair[] = [];
    for (const q of list) {
      const [p, s] = await Promise.all([measureCheck(provider, plain, q, false), measureCheck(provider, streaming, q, true)]);
      pairs.push({ question: q, plain: p, streamed: s });
    }
    const [ambiguous, clear] = pairs;
    expect([ambiguous!.plain.status, ambiguous!.streamed.status]).toEqual(['AMBIGUOUS', 'AMBIGUOUS']);
    expect(ambiguous!.streamed.interpretations).toEqual(ambiguous!.plain.interpretations);
    expect(ambiguous!.streamed.answer).toBeNull();
    expect(ambiguous!.plain.tokensSent).toBe(ambiguous!.question.tokens);
    expect(ambiguous!.streamed.tokensSent).toBeGreaterThanOrEqual(ambiguous!.question.readingsTokens);
    expect(ambiguous!.streamed.tokensSent).toBeLessThan(ambiguous!.question.tokens / 2);
    expect(provider.served.find((s) => s.question === ambiguous!.question.id && s.stream)?.closedEarly).toBe(true);

    expect([clear!.plain.status, clear!.streamed.status]).toEqual(['VERIFIED', 'VERIFIED']);
    expect(clear!.streamed.answer).toBe(clear!.plain.answer);
    expect(clear!.streamed.tokensSent).toBe(clear!.question.tokens);
    expect(clear!.plain.partials).toBe(0);
    expect(clear!.plain.firstAnswerMs).toBeNull();
    expect(clear!.streamed.partials).toBeGreaterThan(10);
    expect(clear!.streamed.firstAnswerMs).not.toBeNull();
    expect(clear!.streamed.firstAnswerMs!).toBeLessThanOrEqual(clear!.streamed.lastChunkMs!);
    // onPartial shows the answer with the chunk that brings its first character, not later.
    expect(clear!.streamed.answerChunkMs).not.toBeNull();
    expect(clear!.streamed.firstAnswerMs!).toBeGreaterThanOrEqual(clear!.streamed.answerChunkMs!);
    expect(clear!.streamed.partials).toBeLessThanOrEqual(clear!.question.tokens);

    // The verdicts agree, so no target fails for that; the token target holds by counts alone.
    const targets = judge(pairs);
    expect(targets.map((t) => t.detail)).toEqual(['', '', '', '']);
    expect(targets[1]!.pass).toBe(true);
  });
});

describe("the targets' arithmetic", () => {
  const [ambiguous, , clear] = questions(1, [100, 200]);
  const measured = (question: NonNullable<typeof ambiguous>, streamed: boolean, m: Partial<Measured>): Measured => ({
    question,
    streamed,
    status: question.kind === 'ambiguous' ? 'AMBIGUOUS' : 'VERIFIED',
    answer: question.kind === 'ambiguous' && streamed ? null : 'x',
    interpretations: question.kind === 'ambiguous' ? ['one', 'two'] : [],
    verdictMs: 1000,
    lastChunkMs: 1000,
    firstAnswerMs: null,
    answerChunkMs: null,
    partials: 0,
    tokensSent: question.tokens,
    tokens: question.tokens,
    ...m,
  });
  const pairs = (a: Partial<Measured>, c: Partial<Measured>, plainClear: Partial<Measured> = {}): Pair[] => [
    { question: ambiguous!, plain: measured(ambiguous!, false, {}), streamed: measured(ambiguous!, true, a) },
    { question: clear!, plain: measured(clear!, false, plainClear), streamed: measured(clear!, true, c) },
  ];

  it('passes what meets each target, with the figures', () => {
    const targets = judge(pairs({ verdictMs: 400, tokensSent: Math.floor(ambiguous!.tokens / 2) }, { firstAnswerMs: 90, verdictMs: 1040 }));
    expect(targets.map((t) => t.pass)).toEqual([true, true, true, true]);
    expect(targets.map((t) => t.direction)).toEqual(['at-least', 'at-most', 'at-most', 'at-most']);
    expect(targets[0]!.overall).toBe(2.5);
    expect(targets[0]!.questions.map((q) => [q.question.id, q.value, q.met])).toEqual([[ambiguous!.id, 2.5, true]]);
    expect(targets[1]!.overall).toBeLessThanOrEqual(0.5);
    expect(targets[2]!.overall).toBeCloseTo(0.09);
    expect(targets[3]!.overall).toBeCloseTo(1.04);
    expect(targets.every((t) => t.detail === '')).toBe(true);
    // The bounds: from the reply's tokens, and with a time to first token from the provider's schedule.
    expect(targets[0]!.questions[0]!.bound).toBeCloseTo(ambiguous!.tokens / ambiguous!.readingsTokens);
    expect(targets[1]!.questions[0]!.bound).toBeCloseTo(ambiguous!.readingsTokens / ambiguous!.tokens);
    expect(targets[2]!.questions[0]!.bound).toBeCloseTo(clear!.firstAnswerTokens / clear!.tokens);
    const slow = judge(pairs({ verdictMs: 400 }, { firstAnswerMs: 90 }), { msPerToken: 5, firstTokenMs: 400 });
    expect(slow[0]!.questions[0]!.bound).toBeCloseTo((400 + 5 * ambiguous!.tokens) / (400 + 5 * ambiguous!.readingsTokens));
    expect(slow[1]!.questions[0]!.bound).toBeCloseTo(ambiguous!.readingsTokens / ambiguous!.tokens);
    expect(slow[2]!.questions[0]!.bound).toBeCloseTo((400 + 5 * clear!.firstAnswerTokens) / (400 + 5 * clear!.tokens));
  });

  it('fails what misses each target, just past its limit', () => {
    const targets = judge(pairs({ verdictMs: 510, tokensSent: Math.floor(ambiguous!.tokens / 2) + 1 }, { firstAnswerMs: 110, verdictMs: 1060 }));
    expect(targets.map((t) => t.pass)).toEqual([false, false, false, false]);
    expect(targets[0]!.overall).toBeCloseTo(1000 / 510);
    expect(targets.every((t) => t.questions.every((q) => !q.met))).toBe(true);
  });

  it('judges every question: one that misses fails the target, though the totals meet it', () => {
    const [a1, a2] = questions(2, [100, 800]);
    const two: Pair[] = [
      { question: a1!, plain: measured(a1!, false, { verdictMs: 1000 }), streamed: measured(a1!, true, { verdictMs: 600 }) },
      { question: a2!, plain: measured(a2!, false, { verdictMs: 8000 }), streamed: measured(a2!, true, { verdictMs: 400 }) },
    ];
    const [sooner] = judge(two);
    expect(sooner!.overall).toBe(9);
    expect(sooner!.questions.map((q) => q.met)).toEqual([false, true]);
    expect(sooner!.pass).toBe(false);
  });

  it('fails a kind whose verdicts differ between the two ways, however fast', () => {
    const targets = judge(pairs({ verdictMs: 100, tokensSent: 1, status: 'UNCERTAIN' }, { firstAnswerMs: 10, verdictMs: 1000, answer: 'y' }));
    expect(targets.map((t) => t.pass)).toEqual([false, false, false, false]);
    expect(targets[0]!.detail).toContain('differ');
    expect(targets[0]!.detail).toContain(ambiguous!.id);
    // Ambiguous: the readings are the verdict; the answer under the likeliest one is what streaming does not wait for.
    const readings = judge(pairs({ verdictMs: 100, tokensSent: 1, interpretations: ['one'] }, { firstAnswerMs: 10, verdictMs: 1000 }));
    expect(readings.map((t) => t.pass)).toEqual([false, false, true, true]);
  });

  it('makes rounds of a check one by the least of each figure, and marks a verdict that changed', () => {
    const a = measured(clear!, true, { verdictMs: 900, lastChunkMs: 880, firstAnswerMs: 120, answerChunkMs: 119, tokensSent: 228, partials: 228 });
    const b = measured(clear!, true, { verdictMs: 950, lastChunkMs: 870, firstAnswerMs: 200, answerChunkMs: 199, tokensSent: 228, partials: 227 });
    expect(bestOf([a, b])).toMatchObject({ status: 'VERIFIED', verdictMs: 900, lastChunkMs: 870, firstAnswerMs: 120, answerChunkMs: 119, partials: 227 });
    expect(bestOf([a])).toEqual(a);
    expect(bestOf([a, { ...b, firstAnswerMs: null }]).firstAnswerMs).toBeNull();
    const changed = bestOf([a, { ...b, status: 'UNCERTAIN' }]);
    expect(changed.status).toBe('MIXED (VERIFIED, UNCERTAIN)');
    expect(judge([{ question: clear!, plain: a, streamed: changed }])[3]!.pass).toBe(false);
    expect(() => bestOf([])).toThrow(RangeError);
  });

  it('fails the first-answer target when no partial answer came', () => {
    const targets = judge(pairs({ verdictMs: 100, tokensSent: 1 }, { firstAnswerMs: null, verdictMs: 1000 }));
    expect(targets[2]!.pass).toBe(false);
    expect(targets[2]!.overall).toBeNaN();
    expect(targets[3]!.pass).toBe(true);
  });
});
