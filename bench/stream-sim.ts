/**
 * What `npm run bench:stream` (bench/stream.ts) measures on: a loopback provider that speaks
 * OpenAI's chat completions and streams its replies as server-sent events at a fixed token
 * rate, the questions it answers, a streaming callFn over fetch, and the arithmetic of the
 * issue's targets. Everything here but the server's clock is deterministic;
 * tests/bench/stream-bench.test.ts checks it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { acheck, type AsyncCallFn, type CallInfo, type PartialReply } from '../src/index.js';
import { mulberry32 } from './spend-sim.js';

// ---- tokens and replies ----------------------------------------------------------------------

/** The simulated tokenizer: four characters (code points) a token, the usual rule of thumb for English. */
export const CHARS_PER_TOKEN = 4;

/** The reply cut into tokens of four code points (the last may be shorter); never splits a surrogate pair. */
export function tokensOf(text: string): string[] {
  const points = Array.from(text);
  const tokens: string[] = [];
  for (let k = 0; k < points.length; k += CHARS_PER_TOKEN) tokens.push(points.slice(k, k + CHARS_PER_TOKEN).join(''));
  return tokens;
}

export type Kind = 'ambiguous' | 'clear';

export interface Question {
  /** `q0`, `q1`, …: written into the question, so the server knows which reply to stream. */
  readonly id: string;
  readonly kind: Kind;
  readonly text: string;
  /** The whole reply the model sends, an envelope in Booth's key order. */
  readonly reply: string;
  /** Tokens of the reply, and of the text before its answer's first character (`…"answer": "`). */
  readonly tokens: number;
  readonly answerTokens: number;
  /** Tokens up to the end of the interpretations array: where an ambiguous reply is decided. */
  readonly readingsTokens: number;
  /** Tokens up to the answer's opening quote and one character after it. */
  readonly firstAnswerTokens: number;
  /** Where the answer's first character is in the reply, in UTF-16 code units. */
  readonly answerAt: number;
}

const WORDS = (
  'the of a to in is it that for on was with as by at be this from or which an are have not but had they you were his her ' +
  'their one all there been has more when will would who so no if out up what about into than them can only other time new ' +
  'some could these two may first then do any like my now over such our man me even most made after also did many before must ' +
  'through back years where much your way well down should because each just those people how too little state good very make ' +
  'world still own see men work long get here between both life being under never day same another know while last might us ' +
  'great old year off come since against go came right used take three river capital bank mercury jaguar python java apple'
).split(' ');

/** `n` tokens' worth of prose (about `n * 4` characters), with the occasional newline and quotation a long answer has. */
export function prose(random: () => number, tokens: number): string {
  const target = tokens * CHARS_PER_TOKEN;
  let text = '';
  let sentence = 0;
  while (text.length < target) {
    const word = WORDS[Math.floor(random() * WORDS.length)]!;
    text += sentence === 0 ? word[0]!.toUpperCase() + word.slice(1) : ` ${word}`;
    sentence += 1;
    if (sentence > 6 && random() < 0.15) {
      const r = random();
      text += r < 0.1 ? '.\n\n' : r < 0.15 ? ': "quoted"' + '. ' : '. ';
      sentence = 0;
    }
  }
  return text.slice(0, target);
}

/** The envelope as a model writes it: Booth's key order, JSON.stringify's escapes, a space after each colon and comma. */
export function envelopeReply(fields: {
  readonly ambiguous: boolean;
  readonly interpretations: readonly string[];
  readonly chosen: string | null;
  readonly answer: string;
  readonly confidence: number;
}): string {
  const s = JSON.stringify;
  return (
    `{"ambiguous": ${fields.ambiguous}, "interpretations": [${fields.interpretations.map((x) => s(x)).join(', ')}], ` +
    `"chosen_interpretation": ${s(fields.chosen)}, "answer": ${s(fields.answer)}, "confidence": ${fields.confidence}}`
  );
}

/** Tokens of `reply` up to and including the character at `index`. */
function tokensThrough(reply: string, index: number): number {
  return Math.ceil(Array.from(reply.slice(0, index + 1)).length / CHARS_PER_TOKEN);
}

/**
 * One question of each kind per answer length, ambiguous ones first. An ambiguous reply has
 * two to four readings of six to twelve words, then the answer under the most likely reading
 * (the instructions ask for one) and a confidence of 0.6; a clear one an empty list, null and 0.9.
 */
export function questions(seed: number, answerTokens: readonly number[]): Question[] {
  const random = mulberry32(seed);
  const list: Question[] = [];
  for (const kind of ['ambiguous', 'clear'] as const) {
    for (const length of answerTokens) {
      const id = `q${list.length}`;
      const readings =
        kind === 'clear'
          ? []
          : Array.from({ length: 2 + Math.floor(random() * 3) }, () => reading(random));
      const answer = prose(random, length);
      const reply = envelopeReply({
        ambiguous: kind === 'ambiguous',
        interpretations: readings,
        chosen: readings[0] ?? null,
        answer,
        confidence: kind === 'ambiguous' ? 0.6 : 0.9,
      });
      const answerAt = reply.indexOf('"answer": "') + '"answer": "'.length;
      list.push({
        id,
        kind,
        text: `[${id}] ${prose(random, 6)}?`,
        reply,
        tokens: tokensOf(reply).length,
        answerTokens: length,
        readingsTokens: tokensThrough(reply, reply.indexOf(']')),
        firstAnswerTokens: tokensThrough(reply, answerAt),
        answerAt,
      });
    }
  }
  return list;
}

/** One reading of an ambiguous question: six to twelve words. */
function reading(random: () => number): string {
  const n = 6 + Math.floor(random() * 7);
  return Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]!).join(' ');
}

// ---- the loopback provider ---------------------------------------------------------------------

/** One request as the provider served it: the provider's ledger. */
export interface Served {
  readonly question: string;
  readonly stream: boolean;
  /** Tokens of the whole reply. */
  readonly tokens: number;
  /** Tokens sent before the reply ended or the client closed: what the call is billed for output. */
  sent: number;
  /** The client closed the connection before the reply was whole. */
  closedEarly: boolean;
  /** `performance.now()` when the request arrived, and when the reply was whole or the connection closed. */
  readonly startedAt: number;
  endedAt: number | null;
}

export interface ProviderOptions {
  /** Milliseconds per token: token k (from 1) is sent `firstTokenMs + k * msPerToken` after the request. */
  readonly msPerToken: number;
  /** Time to first token, before the first token's own `msPerToken`. Default 0. */
  readonly firstTokenMs?: number;
  /** The reply to a request, from its last user message; null answers 404. */
  readonly replyFor: (userText: string) => { readonly question: string; readonly reply: string } | null;
}

export interface StreamingProvider {
  /** The API root: `${url}/v1`. */
  readonly url: string;
  readonly served: Served[];
  close(): Promise<void>;
}

/** An SSE event of a chat completion stream. */
export const sseEvent = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const chunkOf = (delta: Record<string, unknown>, finish: string | null) => ({
  id: 'chatcmpl-bench',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'bench-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/**
 * A chat completions server on 127.0.0.1 (a free port). A streamed request (`"stream": true`)
 * gets one SSE event per token, each at its time on a fixed schedule, then a finishing chunk,
 * a usage chunk and `[DONE]`; any other request gets the whole completion when its last token
 * is due, as a provider that generates first and answers after. Tokens due together (a late
 * timer) are written together, so the reply keeps the schedule however busy the machine is.
 */
export async function startStreamingProvider(options: ProviderOptions): Promise<StreamingProvider> {
  const served: Served[] = [];
  const firstTokenMs = options.firstTokenMs ?? 0;
  const server: Server = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk: Buffer) => (raw += chunk));
    request.on('end', () => {
      const startedAt = performance.now();
      const body = JSON.parse(raw || '{}') as { stream?: boolean; messages?: Array<{ role: string; content: string }> };
      const user = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user')?.content ?? '';
      const found = options.replyFor(user);
      if (found === null) {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such question"}}');
        return;
      }
      const tokens = tokensOf(found.reply);
      const promptTokens = Math.ceil(raw.length / CHARS_PER_TOKEN);
      const usage = { prompt_tokens: promptTokens, completion_tokens: tokens.length, total_tokens: promptTokens + tokens.length };
      const entry: Served = { question: found.question, stream: body.stream === true, tokens: tokens.length, sent: 0, closedEarly: false, startedAt, endedAt: null };
      served.push(entry);
      let timer: NodeJS.Timeout | undefined;
      response.on('close', () => {
        clearTimeout(timer);
        if (entry.endedAt === null) {
          entry.closedEarly = true;
          entry.endedAt = performance.now();
        }
      });
      const dueAt = (k: number) => startedAt + firstTokenMs + k * options.msPerToken;
      if (!entry.stream) {
        timer = setTimeout(() => {
          if (response.destroyed) return;
          entry.sent = tokens.length;
          entry.endedAt = performance.now();
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(
            JSON.stringify({
              id: 'chatcmpl-bench',
              object: 'chat.completion',
              created: 0,
              model: 'bench-model',
              choices: [{ index: 0, message: { role: 'assistant', content: found.reply }, finish_reason: 'stop' }],
              usage,
            }),
          );
        }, Math.max(0, dueAt(tokens.length) - performance.now()));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      response.flushHeaders();
      const tick = () => {
        if (response.destroyed) return;
        const now = performance.now();
        const due = Math.min(tokens.length, Math.floor((now - startedAt - firstTokenMs) / options.msPerToken));
        let out = entry.sent === 0 && due > 0 ? sseEvent(chunkOf({ role: 'assistant', content: '' }, null)) : '';
        for (; entry.sent < due; entry.sent += 1) out += sseEvent(chunkOf({ content: tokens[entry.sent] }, null));
        if (entry.sent === tokens.length) {
          entry.endedAt = now;
          out += sseEvent(chunkOf({}, 'stop'));
          out += sseEvent({ ...chunkOf({}, null), choices: [], usage });
          out += 'data: [DONE]\n\n';
          response.end(out);
          return;
        }
        if (out !== '') response.write(out);
        timer = setTimeout(tick, Math.max(0, dueAt(entry.sent + 1) - performance.now()));
      };
      timer = setTimeout(tick, Math.max(0, dueAt(1) - performance.now()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---- a streaming callFn over fetch --------------------------------------------------------------

/**
 * The content deltas of an OpenAI chat completion SSE body, one chunk per event, as text; the
 * usage event is passed to `onUsage`. Ending the iteration early cancels the body.
 */
export async function* sseContent(body: ReadableStream<Uint8Array>, onUsage: (usage: Record<string, unknown>) => void): AsyncGenerator<string> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      // Normalised as a whole: a CRLF may arrive split across two reads.
      buffer = (buffer + value).replaceAll('\r\n', '\n');
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).replace(/^ /, ''))
          .join('\n');
        if (data === '') continue;
        if (data === '[DONE]') return;
        const chunk = JSON.parse(data) as { usage?: Record<string, unknown> | null; choices?: Array<{ delta?: { content?: unknown } }> };
        if (chunk.usage) onUsage(chunk.usage);
        const content = chunk.choices?.[0]?.delta?.content;
        if (typeof content === 'string' && content !== '') yield content;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * A streaming `callFn` over fetch and SSE: what the bench uses when the library's own
 * streaming adapter is not there. Sends the run's chat (`info.messages`), usage from the final event.
 */
export function sseCallFn(baseURL: string, model = 'bench-model'): AsyncCallFn {
  return async (prompt: string, info: CallInfo) => {
    const response = await fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        messages: info.messages ?? [{ role: 'user', content: prompt }],
        stream: true,
        stream_options: { include_usage: true },
      }),
      ...(info.signal ? { signal: info.signal } : {}),
    });
    if (!response.ok || response.body === null) throw new Error(`the bench's provider answered ${response.status}`);
    return sseContent(response.body, (usage) =>
      info.reportUsage?.({ inputTokens: Number(usage['prompt_tokens']), outputTokens: Number(usage['completion_tokens']) }),
    );
  };
}

// ---- what a check came to, and the targets -------------------------------------------------------

/** One check, as the bench measured it (times in ms from the call to acheck). */
export interface Measured {
  readonly question: Question;
  readonly streamed: boolean;
  readonly status: string;
  readonly answer: unknown;
  readonly interpretations: readonly string[];
  readonly verdictMs: number;
  /** The reply's last chunk (streamed) or the whole reply (not) reached the callFn's caller; null when it never did. */
  readonly lastChunkMs: number | null;
  /** The first `onPartial` whose `answerSoFar` is not null; null when none came. */
  readonly firstAnswerMs: number | null;
  /** When the chunk holding the answer's first character reached Booth; null when none did. */
  readonly answerChunkMs: number | null;
  readonly partials: number;
  /** From the provider's ledger: output tokens sent, of the reply's. */
  readonly tokensSent: number;
  readonly tokens: number;
}

/** When a reply reached Booth: its last chunk, and the chunk that took it past `at` (a code unit's index). */
export interface Marks {
  last: number | null;
  at: number;
  past: number | null;
  length: number;
}

/** The callFn, noting in `marks` when its reply reached Booth: the whole string, or each chunk of the stream. */
export function timed(call: AsyncCallFn, started: number, marks: Marks): AsyncCallFn {
  const seen = (text: string) => {
    const now = performance.now() - started;
    marks.last = now;
    marks.length += text.length;
    if (marks.past === null && marks.length > marks.at) marks.past = now;
  };
  return async (prompt: string, info: CallInfo) => {
    const out = await call(prompt, info);
    if (typeof out === 'string') {
      seen(out);
      return out;
    }
    const chunks = out as AsyncIterable<string>;
    return (async function* () {
      for await (const chunk of chunks) {
        seen(chunk);
        yield chunk;
      }
    })();
  };
}

/**
 * One `acheck` of `q` through `call` (a streaming one gets `onPartial`), with its times and
 * the provider's ledger of what it sent. Waits, up to a second, for the provider to see the
 * connection end: a client closes it a moment before the server learns of it.
 */
export async function measureCheck(provider: StreamingProvider, call: AsyncCallFn, q: Question, streamed: boolean): Promise<Measured> {
  const started = performance.now();
  const marks: Marks = { last: null, at: q.answerAt, past: null, length: 0 };
  let firstAnswerMs: number | null = null;
  let partials = 0;
  const onPartial = (partial: PartialReply) => {
    partials += 1;
    if (firstAnswerMs === null && partial.answerSoFar !== null) firstAnswerMs = performance.now() - started;
  };
  const result = await acheck(timed(call, started, marks), q.text, streamed ? { onPartial } : {});
  const verdictMs = performance.now() - started;
  // This check's requests: the question's, streamed or not, since the check began (an earlier round's began before).
  const mine = () => provider.served.filter((s) => s.question === q.id && s.stream === streamed && s.startedAt >= started);
  for (let waited = 0; waited < 1000 && mine().some((s) => s.endedAt === null); waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
  const served = mine();
  return {
    question: q,
    streamed,
    status: result.status,
    answer: result.answer,
    interpretations: result.interpretations,
    verdictMs,
    lastChunkMs: marks.last,
    firstAnswerMs,
    answerChunkMs: marks.past,
    partials,
    tokensSent: served.reduce((n, s) => n + s.sent, 0),
    tokens: served.reduce((n, s) => n + s.tokens, 0),
  };
}

/**
 * Rounds of the same check made one: the best (least) of each time and of the tokens sent.
 * On a shared machine every disturbance only adds (a process not scheduled, a timer late, a
 * close seen late), so the least of rounds is the figure with the least of it, as in the
 * other benches. A verdict that changes between rounds is kept as `MIXED`, which no target accepts.
 */
export function bestOf(rounds: readonly Measured[]): Measured {
  const first = rounds[0];
  if (first === undefined) throw new RangeError('bestOf needs at least one round');
  const least = (f: (m: Measured) => number | null) => {
    const values = rounds.map(f);
    return values.some((v) => v === null) ? null : Math.min(...(values as number[]));
  };
  const same = rounds.every(
    (m) => m.status === first.status && JSON.stringify([m.answer, m.interpretations]) === JSON.stringify([first.answer, first.interpretations]),
  );
  return {
    ...first,
    status: same ? first.status : `MIXED (${rounds.map((m) => m.status).join(', ')})`,
    verdictMs: least((m) => m.verdictMs)!,
    lastChunkMs: least((m) => m.lastChunkMs),
    firstAnswerMs: least((m) => m.firstAnswerMs),
    answerChunkMs: least((m) => m.answerChunkMs),
    partials: least((m) => m.partials)!,
    tokensSent: least((m) => m.tokensSent)!,
  };
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

export interface Pair {
  readonly question: Question;
  readonly plain: Measured;
  readonly streamed: Measured;
}

export interface Target {
  readonly name: string;
  /** Met on every question, the two verdicts of each agreeing and of the expected status. */
  readonly pass: boolean;
  /** The figure over all the questions of the kind: a ratio of their totals. */
  readonly overall: number;
  /** Each question's figure, and whether it meets the target. */
  readonly questions: ReadonlyArray<{
    readonly question: Question;
    readonly value: number;
    readonly met: boolean;
    /**
     * The best figure the reply allows, from its tokens alone: a client that decided the
     * moment the deciding token arrived and closed at once (ambiguous), showed the answer with
     * the token holding its first character (clear), and lost no time (the verdict: 1).
     */
    readonly bound: number;
  }>;
  readonly limit: number;
  /** `at-least` the limit, or `at-most`. */
  readonly direction: 'at-least' | 'at-most';
  /** Why a question fails whatever its figure: its two verdicts differ, or are not the expected status; '' when none. */
  readonly detail: string;
}

/**
 * The four targets over pairs of checks of the same questions (non-streaming,
 * streaming), each judged on every question, since each is a property of one reply:
 * - ambiguous, verdict: non-streaming time to verdict over streaming's, at least 2;
 * - ambiguous, tokens: streaming's output tokens sent over non-streaming's, at most 0.5;
 * - clear, first partial answer: its time over the streamed reply's time (to its last chunk), at most 0.1;
 * - clear, verdict: streaming's time to verdict over non-streaming's, at most 1.05.
 * `overall` is the same ratio of the kind's totals. `schedule` is the provider's: the bounds
 * of the time targets count its time to first token. A pair whose verdicts differ (status and
 * readings for an ambiguous question, status and answer for a clear one), or whose time is
 * missing, fails its targets.
 */
export function judge(pairs: readonly Pair[], schedule: { readonly msPerToken: number; readonly firstTokenMs: number } = { msPerToken: 1, firstTokenMs: 0 }): Target[] {
  /** When token k (from 1) is due: the provider's schedule, for the bounds of the time targets. */
  const due = (k: number) => schedule.firstTokenMs + k * schedule.msPerToken;
  // An AMBIGUOUS verdict is the status and the readings: its answer (under the likeliest
  // reading) is what streaming saves generating, so a streamed one has none.
  const agree = (p: Pair) =>
    p.plain.status === p.streamed.status &&
    (p.question.kind === 'ambiguous'
      ? JSON.stringify(p.plain.interpretations) === JSON.stringify(p.streamed.interpretations)
      : JSON.stringify(p.plain.answer) === JSON.stringify(p.streamed.answer));
  const expected = (p: Pair) => agree(p) && p.plain.status === (p.question.kind === 'ambiguous' ? 'AMBIGUOUS' : 'VERIFIED');
  const target = (
    name: string,
    kind: Kind,
    direction: Target['direction'],
    limit: number,
    top: (m: Measured) => number | null,
    bottom: (m: Measured) => number | null,
    // Which check each figure comes from: [numerator's, denominator's].
    from: readonly ['plain' | 'streamed', 'plain' | 'streamed'],
    bound: (q: Question) => number,
  ): Target => {
    const of = pairs.filter((p) => p.question.kind === kind);
    const value = (p: Pair) => {
      const a = top(p[from[0]]);
      const b = bottom(p[from[1]]);
      return a === null || b === null ? Number.NaN : a / b;
    };
    const meets = (x: number) => (direction === 'at-least' ? x >= limit : x <= limit);
    const questions = of.map((p) => {
      const x = value(p);
      return { question: p.question, value: x, met: expected(p) && meets(x), bound: bound(p.question) };
    });
    const totals = of.map((p) => [top(p[from[0]]), bottom(p[from[1]])] as const);
    const overall = totals.some(([a, b]) => a === null || b === null) ? Number.NaN : sum(totals.map(([a]) => a!)) / sum(totals.map(([, b]) => b!));
    const wrong = of.filter((p) => !expected(p)).map((p) => p.question.id);
    return {
      name,
      pass: questions.length > 0 && questions.every((q) => q.met),
      overall,
      questions,
      limit,
      direction,
      detail: wrong.length === 0 ? '' : `the two verdicts differ or are not ${kind === 'ambiguous' ? 'AMBIGUOUS' : 'VERIFIED'} on ${wrong.join(', ')}`,
    };
  };
  return [
    target('ambiguous: verdict at least 2× sooner', 'ambiguous', 'at-least', 2, (m) => m.verdictMs, (m) => m.verdictMs, ['plain', 'streamed'], (q) => due(q.tokens) / due(q.readingsTokens)),
    target('ambiguous: at most half the output tokens', 'ambiguous', 'at-most', 0.5, (m) => m.tokensSent, (m) => m.tokensSent, ['streamed', 'plain'], (q) => q.readingsTokens / q.tokens),
    target('clear: first partial answer in the first tenth', 'clear', 'at-most', 0.1, (m) => m.firstAnswerMs, (m) => m.lastChunkMs, ['streamed', 'streamed'], (q) => due(q.firstAnswerTokens) / due(q.tokens)),
    target('clear: verdict within 5 % of non-streaming', 'clear', 'at-most', 1.05, (m) => m.verdictMs, (m) => m.verdictMs, ['streamed', 'plain'], () => 1),
  ];
}
