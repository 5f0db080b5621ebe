import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText as aiGenerateText, streamText } from 'ai';
import OpenAI from 'openai';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromAISDK, fromAnthropic, fromOpenAI, openAICompatible, ProviderError } from '../../src/adapters/index.js';
import { acheck, type PartialReply } from '../../src/index.js';
import { EventStreamReader } from '../../src/adapters/sse.js';
import type { AsyncCallFn, CallInfo, ReplyStream } from '../../src/decide/model-call.js';
import type { UsageReport } from '../../src/decide/usage.js';
import { isTransient } from '../../src/decide/call-retries.js';
import { envelope } from '../fixtures/helpers.js';
import { chunksOf, type StreamRecord, useProvider } from '../fixtures/provider-server.js';

/**
 * Streaming adapters against a provider on loopback that streams real server-sent events,
 * in OpenAI's and Anthropic's wire formats: the chunks in order, the usage of the final event
 * reported once, HTTP errors before any chunk, a stream that breaks off or sends an error a
 * transient failure, and an iteration ended early (or a signal aborted) closing the connection.
 */

const server = useProvider();

/** The reply of a call: the text chunks of a stream, or the one string of a whole reply. */
async function chunksFrom(reply: string | ReplyStream): Promise<string[]> {
  if (typeof reply === 'string') return [reply];
  const chunks: string[] = [];
  for await (const chunk of reply as AsyncIterable<string>) chunks.push(chunk);
  return chunks;
}

/** A call's info that records the usage reported. */
function recording(extra: Partial<CallInfo> = {}): { info: CallInfo; usage: UsageReport[] } {
  const usage: UsageReport[] = [];
  return { info: { attempt: 0, reportUsage: (report) => usage.push(report), ...extra }, usage };
}

/** What a call that should fail failed with. */
async function failureOf(run: () => Promise<unknown>): Promise<Error> {
  try {
    await run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

/** The server's record of the one stream it sent, once the connection has closed. */
async function closedStream(): Promise<StreamRecord> {
  await expect.poll(() => server.provider.streams[0]?.closedAt ?? null, { interval: 5, timeout: 5_000 }).not.toBeNull();
  return server.provider.streams[0]!;
}

const fetchStreaming = (extra: object = {}): AsyncCallFn =>
  openAICompatible({ baseURL: `${server.provider.url}/v1`, model: 'test-model', apiKey: 'sk-secret-key', stream: true, ...extra });

const clientOptions = { apiKey: 'sk-secret-key', maxRetries: 0 };
/** Each adapter with `stream: true`, against the loopback provider. */
const streaming = {
  fetch: fetchStreaming,
  openai: (extra: object = {}): AsyncCallFn => fromOpenAI(new OpenAI({ ...clientOptions, baseURL: `${server.provider.url}/v1` }), { model: 'test-model', stream: true, ...extra }),
  anthropic: (extra: object = {}): AsyncCallFn => fromAnthropic(new Anthropic({ ...clientOptions, baseURL: server.provider.url }), { model: 'test-model', stream: true, ...extra }),
  // The real AI SDK, its OpenAI-compatible provider pointed at the loopback server; the SDK's own retries off.
  aisdk: (extra: object = {}): AsyncCallFn => {
    const provider = createOpenAICompatible({ name: 'loopback', baseURL: `${server.provider.url}/v1`, apiKey: 'sk-secret-key', includeUsage: true });
    return fromAISDK({ streamText: (options) => streamText({ ...options, maxRetries: 0 }), model: provider('test-model'), stream: true, ...extra });
  },
};

/** A reply whose every part would be a giveaway in an error message. */
const HOSTILE = 'SECRET-REPLY </script><img src=x onerror=alert(1)> ${process.env.KEY} \u0000 "quoted" \\ \n data: [DONE]\n\n';

describe.each(['fetch', 'openai', 'anthropic', 'aisdk'] as const)('%s adapter with stream: true, against real SSE', (name) => {
  const adapter = (extra: object = {}) => streaming[name](extra);
  const wireUsage = (input: number, output: number) =>
    name === 'anthropic' ? { input_tokens: input, output_tokens: output } : { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };

  it('the chunks arrive in order and make the text; the usage of the final events is reported once, when the stream ends', async () => {
    const text = envelope('Paris, the capital of France', 0.9);
    server.provider.script.push({ text, stream: { chunkSizes: [1, 2, 3, 7] }, usage: wireUsage(120, 30) });
    const { info, usage } = recording();
    const reply = await adapter()('q', info);
    expect(typeof reply).not.toBe('string');
    const seen: string[] = [];
    for await (const chunk of reply as AsyncIterable<string>) {
      seen.push(chunk);
      // Nothing is reported before the stream's end.
      if (seen.length < chunksOf(text, [1, 2, 3, 7]).length) expect(usage).toEqual([]);
    }
    expect(seen).toEqual(chunksOf(text, [1, 2, 3, 7]));
    expect(usage).toEqual([{ inputTokens: 120, outputTokens: 30, totalTokens: name === 'anthropic' ? null : 150 }]);
    expect(server.provider.received[0]?.body['stream']).toBe(true);
    expect(server.provider.streams[0]).toMatchObject({ ended: true, clientClosed: false });
  });

  it('an HTTP error rejects the call before any chunk, as without streaming: a ProviderError with status and Retry-After', async () => {
    server.provider.script.push({ status: 429, headers: { 'retry-after': '2' }, body: { error: { message: 'rate limited' } } });
    const error = await failureOf(async () => adapter()('q', { attempt: 0 }));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 429, retryAfterMs: 2000 });
    expect(error.message).toContain('rate limited');
    expect(isTransient(error)).toBe(true);
    server.provider.script.push({ status: 401, body: { error: { message: 'bad key' } } });
    const refused = await failureOf(async () => adapter()('q', { attempt: 0 }));
    expect(refused).toMatchObject({ status: 401 });
    expect(isTransient(refused)).toBe(false);
    expect(server.provider.streams).toEqual([]);
  });

  it('a connection cut mid-stream makes the iterator throw a transient ProviderError naming neither reply nor key', async () => {
    server.provider.script.push({ text: HOSTILE, stream: { chunkSizes: 4, cutAfter: 3 } });
    const reply = await adapter()('q', { attempt: 0 });
    const seen: string[] = [];
    const error = await failureOf(async () => {
      for await (const chunk of reply as AsyncIterable<string>) seen.push(chunk);
    });
    expect(seen.join('')).toBe(chunksOf(HOSTILE, 4).slice(0, 3).join(''));
    expect(error).toBeInstanceOf(ProviderError);
    expect(isTransient(error)).toBe(true);
    expect(error.message).not.toMatch(/SECRET|onerror|sk-secret-key/);
    expect(server.provider.streams[0]).toMatchObject({ cut: true, clientClosed: false });
  });

  it('an error event mid-stream makes the iterator throw a transient ProviderError with the provider’s explanation', async () => {
    server.provider.script.push({ text: HOSTILE, stream: { chunkSizes: 4, errorAfter: 2 } });
    const reply = await adapter()('q', { attempt: 0 });
    const error = await failureOf(() => chunksFrom(reply));
    expect(error).toBeInstanceOf(ProviderError);
    expect(isTransient(error)).toBe(true);
    expect(error.message).toContain(name === 'anthropic' ? 'Overloaded' : 'The server had an error while processing your request.');
    expect(error.message).not.toMatch(/SECRET|onerror|sk-secret-key/);
  });

  it('a break in for-await aborts the request: the server sees the connection closed before the reply was whole', async () => {
    server.provider.script.push({ text: envelope('a long answer '.repeat(50), 0.9), stream: { chunkSizes: 4, delayMs: 5 } });
    const { info, usage } = recording();
    const reply = await adapter()('q', info);
    const seen: string[] = [];
    for await (const chunk of reply as AsyncIterable<string>) {
      seen.push(chunk);
      if (seen.length === 3) break;
    }
    const record = await closedStream();
    expect(record.clientClosed).toBe(true);
    expect(record.sent).toBeLessThan(record.of);
    expect(usage).toEqual([]);
  });

  it('return() while a read is pending ends the iteration at once, and closes the connection', async () => {
    server.provider.script.push({ text: envelope('slow', 0.9), stream: { chunkSizes: 2, delayMs: 2_000 } });
    const reply = (await adapter()('q', { attempt: 0 })) as AsyncIterableIterator<string>;
    const pending = reply.next();
    await reply.return!();
    await expect(pending).resolves.toEqual({ done: true, value: undefined });
    expect((await closedStream()).clientClosed).toBe(true);
  });

  it('the call’s signal aborting mid-stream rejects the iteration with its reason and closes the connection', async () => {
    server.provider.script.push({ text: envelope('a long answer '.repeat(50), 0.9), stream: { chunkSizes: 4, delayMs: 5 } });
    const controller = new AbortController();
    const reply = await adapter()('q', { attempt: 0, signal: controller.signal });
    const seen: string[] = [];
    const error = await failureOf(async () => {
      for await (const chunk of reply as AsyncIterable<string>) {
        seen.push(chunk);
        if (seen.length === 2) controller.abort(new Error('user cancelled'));
      }
    });
    expect(error.message).toBe('user cancelled');
    const record = await closedStream();
    expect(record.clientClosed).toBe(true);
    expect(record.sent).toBeLessThan(record.of);
  });

  it('hostile reply text stays text: the chunks are the text as sent, an SSE line inside a delta included', async () => {
    server.provider.script.push({ text: HOSTILE, stream: { chunkSizes: 3 } });
    expect((await chunksFrom(await adapter()('q', { attempt: 0 }))).join('')).toBe(HOSTILE);
  });

  it('`stream` must be a boolean', () => {
    expect(() => adapter({ stream: 1 })).toThrow(
      new TypeError('Expected `stream` to be a boolean (true to stream the reply to acheck(), which reads it as it arrives), got 1.'),
    );
  });
});

describe.each(['fetch', 'openai', 'anthropic', 'aisdk'] as const)('%s adapter streaming through acheck(), end to end', (name) => {
  const adapter = (extra: object = {}) => streaming[name](extra);
  const unstreamed = (): AsyncCallFn => (name === 'aisdk' ? streaming.aisdk({ stream: false, streamText: undefined, generateText: aiGenerateText }) : streaming[name]({ stream: false }));
  const wireUsage = (input: number, output: number) =>
    name === 'anthropic' ? { input_tokens: input, output_tokens: output } : { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
  const AMBIGUOUS = JSON.stringify({
    ambiguous: true,
    interpretations: ['Paris, France', 'Paris, Texas'],
    chosen_interpretation: null,
    answer: 'A long answer nobody needs. '.repeat(40),
    confidence: 0.5,
  });

  it('an ambiguous reply ends AMBIGUOUS once its readings are complete: the server sees the connection closed before the reply was sent whole', async () => {
    server.provider.script.push({ text: AMBIGUOUS, stream: { chunkSizes: 8, delayMs: 2 }, usage: wireUsage(100, 400) });
    const partials: PartialReply[] = [];
    const result = await acheck(adapter(), 'Where is Paris?', { onPartial: (partial) => partials.push(partial) });
    expect(result.status).toBe('AMBIGUOUS');
    expect(result.interpretations).toEqual(['Paris, France', 'Paris, Texas']);
    const record = await closedStream();
    expect(record.clientClosed).toBe(true);
    expect(record.sent).toBeLessThan(record.of);
    // The answer was not needed: the stream ended long before it was sent (its readings end at a tenth of the reply).
    expect(AMBIGUOUS.indexOf('"answer"')).toBeLessThan(AMBIGUOUS.length / 10);
    expect(record.sent).toBeLessThan(record.of / 2);
    expect(result.attempts[0]!.rawText!.length).toBeLessThan(AMBIGUOUS.indexOf('"answer"') + 16);
    expect(result.attempts[0]?.rawText).toBe(AMBIGUOUS.slice(0, result.attempts[0]!.rawText!.length));
    expect(partials.at(-1)).toMatchObject({ ambiguous: true, interpretations: ['Paris, France', 'Paris, Texas'] });
    expect(server.provider.received).toHaveLength(1);
  });

  it('a clear reply is VERIFIED, with the partial answer shown as it forms and the same usage as without streaming', async () => {
    const reply = envelope('Paris is the capital of France.', 0.95);
    server.provider.script.push({ text: reply, stream: { chunkSizes: 3 }, usage: wireUsage(150, 25) }, { text: reply, usage: wireUsage(150, 25) });
    const partials: PartialReply[] = [];
    const streamed = await acheck(adapter(), 'Capital of France?', { onPartial: (partial) => partials.push(partial) });
    const whole = await acheck(unstreamed(), 'Capital of France?');
    expect(server.provider.received.map((request) => request.body['stream'] === true)).toEqual([true, false]);
    expect(streamed.status).toBe('VERIFIED');
    expect(streamed.answer).toBe('Paris is the capital of France.');
    expect(streamed.usage).toEqual(whole.usage);
    expect(streamed.usage).toMatchObject({ inputTokens: 150, outputTokens: 25 });
    expect(streamed.attempts[0]?.rawText).toBe(reply);
    const answers = partials.map((partial) => partial.answerSoFar).filter((answer) => answer !== null);
    expect(answers.length).toBeGreaterThan(3);
    expect(answers.at(-1)).toBe('Paris is the capital of France.');
  });

  it('a stream slower than timeoutMs is cut mid-reply, its connection closed, and the retry answers', async () => {
    const reply = envelope('Paris', 0.9);
    server.provider.script.push({ text: reply, stream: { chunkSizes: 10, delayMs: 100 } }, { text: reply, stream: { chunkSizes: 8 } });
    const result = await acheck(adapter(), 'q', { timeoutMs: 250 });
    expect(result.status).toBe('REPAIRED');
    expect(result.attempts[0]?.error).toBe('the model call timed out after 250 ms');
    const record = await closedStream();
    expect(record.clientClosed).toBe(true);
    expect(record.sent).toBeLessThan(record.of);
  });

  it('a stream cut mid-reply is retried by callRetries, and the retried stream replaces the text', async () => {
    const reply = envelope('Paris', 0.9);
    server.provider.script.push({ text: reply, stream: { chunkSizes: 4, cutAfter: 5 } }, { text: reply, stream: { chunkSizes: 4 } });
    const partials: PartialReply[] = [];
    const result = await acheck(adapter(), 'q', { callRetries: { retries: 1, minDelayMs: 1, maxDelayMs: 1 }, onPartial: (partial) => partials.push(partial) });
    expect(result.status).toBe('VERIFIED');
    expect(result.attempts[0]?.callTries).toHaveLength(2);
    expect(result.attempts[0]?.callTries[0]?.error).not.toMatch(/Paris/);
    expect(partials.some((partial) => partial.replaces)).toBe(true);
  });
});

describe('the SDK adapters’ streams', () => {
  it('fromAnthropic with the forced tool streams its input’s partial JSON; the cache’s tokens count as input', async () => {
    const reply = JSON.stringify({ ambiguous: false, interpretations: [], chosen_interpretation: null, answer: 'Paris', confidence: 0.9 });
    server.provider.script.push({ text: reply, stream: { chunkSizes: 5 }, usage: { input_tokens: 20, cache_read_input_tokens: 3_000, output_tokens: 40 } });
    const { info, usage } = recording();
    const chunks = await chunksFrom(await streaming.anthropic({ responseFormat: 'json_schema' })('q', info));
    expect(chunks).toEqual(chunksOf(reply, 5));
    expect(usage).toEqual([{ inputTokens: 3_020, outputTokens: 40, totalTokens: null }]);
    expect(server.provider.received[0]?.body).toMatchObject({ stream: true, tool_choice: { type: 'tool', name: 'booth_reply' } });
  });

  it('fromOpenAI asks for the usage in the stream, keeping stream_options of its own', async () => {
    server.provider.script.push({ text: envelope('Paris', 0.9) });
    await chunksFrom(await streaming.openai({ stream_options: { include_obfuscation: false } })('q', { attempt: 0 }));
    expect(server.provider.received[0]?.body).toMatchObject({ stream: true, stream_options: { include_obfuscation: false, include_usage: true } });
  });

  it('a stream without the reply is a failed call, as without streaming', async () => {
    server.provider.script.push({ text: '' }, { text: '' });
    await expect(chunksFrom(await streaming.openai()('q', { attempt: 0 }))).resolves.toEqual([]);
    await expect(chunksFrom(await streaming.anthropic()('q', { attempt: 0 }))).resolves.toEqual([]);
    server.provider.script.push({ body: 'data: {"choices":[{"index":0,"delta":{"refusal":"no"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n', headers: { 'content-type': 'text/event-stream' } });
    await expect(chunksFrom(await streaming.openai()('q', { attempt: 0 }))).rejects.toThrow('The OpenAI client streamed no message content, and the model refused (delta.refusal).');
  });
});

describe('fromAISDK({ stream: true }) with other versions of streamText', () => {
  async function* from<T>(items: readonly T[]): AsyncGenerator<T> {
    for (const item of items) yield item;
  }

  it('version 4’s parts (textDelta, the finish’s usage), and a bare textStream whose usage is the result’s promise', async () => {
    const seen: unknown[] = [];
    const v4 = fromAISDK({
      model: 'a-model',
      stream: true,
      streamText: (options) => {
        seen.push(options);
        return {
          textStream: from([]),
          fullStream: from([
            { type: 'step-start' },
            { type: 'text-delta', textDelta: 'Par' },
            { type: 'text-delta', textDelta: 'is' },
            { type: 'finish', usage: { promptTokens: 7, completionTokens: 2, totalTokens: 9 } },
          ]),
        };
      },
    });
    const first = recording();
    expect(await chunksFrom(await v4('q', first.info))).toEqual(['Par', 'is']);
    expect(first.usage).toEqual([{ inputTokens: 7, outputTokens: 2, totalTokens: 9 }]);
    expect(seen[0]).toMatchObject({ model: 'a-model', messages: [{ role: 'user', content: 'q' }], abortSignal: expect.any(AbortSignal), onError: expect.any(Function) });

    const bare = fromAISDK({
      model: 'a-model',
      stream: true,
      streamText: async () => ({ textStream: from(['a', '', 'b']), totalUsage: Promise.resolve({ inputTokens: 5, outputTokens: 1, totalTokens: 6 }) }),
    });
    const second = recording();
    expect(await chunksFrom(await bare('q', second.info))).toEqual(['a', 'b']);
    expect(second.usage).toEqual([{ inputTokens: 5, outputTokens: 1, totalTokens: 6 }]);
  });

  it('an error part before any text rejects the call with the SDK’s error, its status read; after text, the iteration fails transiently', async () => {
    const apiError = Object.assign(new Error('Too many requests'), { statusCode: 429, responseHeaders: { 'retry-after': '3' } });
    const before = fromAISDK({ model: 'm', stream: true, streamText: () => ({ textStream: from([]), fullStream: from([{ type: 'error', error: apiError }]) }) });
    const error = await failureOf(async () => before('q', { attempt: 0 }));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 429, retryAfterMs: 3000, message: 'Too many requests', cause: apiError });
    const after = fromAISDK({
      model: 'm',
      stream: true,
      streamText: () => ({ textStream: from([]), fullStream: from([{ type: 'text-delta', text: 'SECRET' }, { type: 'error', error: new Error('socket hang up') }]) }),
    });
    const failed = await failureOf(async () => chunksFrom(await after('q', { attempt: 0 })));
    expect(failed).toBeInstanceOf(ProviderError);
    expect(failed.message).toBe("The AI SDK's stream failed after 1 parts (socket hang up)");
    expect(isTransient(failed)).toBe(true);
  });

  it('options: streamText is needed for stream: true, generateText then is not; object output does not stream', () => {
    expect(() => fromAISDK({ model: 'm', stream: true })).toThrow(
      new TypeError("Expected `streamText` to be the AI SDK's streamText (import { streamText } from 'ai'), which `stream: true` calls, got undefined."),
    );
    expect(() => fromAISDK({ model: 'm', stream: 'on' as never, streamText: () => ({ textStream: from([]) }) })).toThrow(
      'Expected `stream` to be a boolean (true to stream the reply to acheck(), which reads it as it arrives), got "on".',
    );
    expect(() => fromAISDK({ model: 'm', stream: true, streamText: () => ({ textStream: from([]) }), responseFormat: 'json_schema' })).toThrow(
      "`stream: true` streams text through `streamText`, and `responseFormat: 'json_schema'` asks for the SDK's object output, which Booth does not stream: leave `stream` out, or use responseFormat 'text'.",
    );
    expect(() => fromAISDK({ model: 'm' })).toThrow("Expected `generateText` to be the AI SDK's generateText");
  });
});

describe('openAICompatible({ stream: true })', () => {
  it('asks for a stream with usage, and returns the content deltas in order as they arrive; the usage reported once, at the end', async () => {
    const text = envelope('Paris', 0.9);
    server.provider.script.push({ text, stream: { chunkSizes: [1, 2, 3, 5] }, usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 } });
    const { info, usage } = recording();
    const reply = await fetchStreaming()('q', info);
    expect(typeof reply).not.toBe('string');
    expect(usage).toEqual([]);
    const chunks = await chunksFrom(reply);
    expect(chunks).toEqual(chunksOf(text, [1, 2, 3, 5]));
    expect(chunks.join('')).toBe(text);
    expect(usage).toEqual([{ inputTokens: 120, outputTokens: 30, totalTokens: 150 }]);
    expect(server.provider.received[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(server.provider.streams[0]).toMatchObject({ ended: true, clientClosed: false });
  });

  it('an HTTP error rejects the call before any chunk, exactly as without streaming: status, Retry-After, the provider’s message', async () => {
    for (const stream of [true, false]) {
      server.provider.script.push({ status: 429, headers: { 'retry-after': '2' }, body: { error: { message: 'rate limited' } } });
      const error = await failureOf(async () => fetchStreaming({ stream })('q', { attempt: 0 }));
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ status: 429, retryAfterMs: 2000, message: `${server.provider.url}/v1/chat/completions answered 429 Too Many Requests: rate limited` });
    }
    server.provider.script.push({ status: 400, body: { error: { message: 'bad model' } } });
    const error = await failureOf(async () => fetchStreaming()('q', { attempt: 0 }));
    expect(error).toMatchObject({ status: 400 });
    expect(isTransient(error)).toBe(false);
  });

  it('a stream the server cuts off mid-reply makes the iterator throw a transient ProviderError that names no reply text', async () => {
    server.provider.script.push({ text: HOSTILE, stream: { chunkSizes: 4, cutAfter: 3 }, usage: { prompt_tokens: 9, completion_tokens: 9, total_tokens: 18 } });
    const { info, usage } = recording();
    const reply = await fetchStreaming()('q', info);
    const seen: string[] = [];
    const error = await failureOf(async () => {
      for await (const chunk of reply as AsyncIterable<string>) seen.push(chunk);
    });
    expect(seen.join('')).toBe(HOSTILE.slice(0, 12));
    expect(error).toBeInstanceOf(ProviderError);
    expect(isTransient(error)).toBe(true);
    expect(error.message).toMatch(new RegExp(`^${server.provider.url}/v1/chat/completions broke off its stream after 4 events \\(terminated`));
    expect(error.message).not.toContain('SECRET');
    expect(error.message).not.toContain('sk-secret-key');
    expect(usage).toEqual([]);
  });

  it('an error event mid-stream makes the iterator throw a transient ProviderError with the provider’s explanation', async () => {
    server.provider.script.push({ text: HOSTILE, stream: { chunkSizes: 4, errorAfter: 2 } });
    const reply = await fetchStreaming()('q', { attempt: 0 });
    const error = await failureOf(() => chunksFrom(reply));
    expect(error).toBeInstanceOf(ProviderError);
    expect(isTransient(error)).toBe(true);
    expect(error.message).toBe(`${server.provider.url}/v1/chat/completions sent an error in its stream after 3 events: The server had an error while processing your request.`);
    expect((error as ProviderError).body).toContain('server_error');
  });

  it('ending the iteration early (break) aborts the request: the server sees the connection closed before the reply was whole', async () => {
    const text = envelope('a long answer '.repeat(50), 0.9);
    server.provider.script.push({ text, stream: { chunkSizes: 4, delayMs: 5 } });
    const { info, usage } = recording();
    const reply = await fetchStreaming()('q', info);
    const seen: string[] = [];
    for await (const chunk of reply as AsyncIterable<string>) {
      seen.push(chunk);
      if (seen.length === 3) break;
    }
    const record = await closedStream();
    expect(record.clientClosed).toBe(true);
    expect(record.sent).toBeLessThan(record.of);
    expect(server.provider.aborted).toHaveLength(1);
    expect(usage).toEqual([]);
  });

  it('return() while a read is pending ends the iteration at once, and closes the connection', async () => {
    server.provider.script.push({ text: envelope('slow', 0.9), stream: { chunkSizes: 2, delayMs: 2_000 } });
    const reply = (await fetchStreaming()('q', { attempt: 0 })) as AsyncIterableIterator<string>;
    const pending = reply.next();
    await reply.return!();
    await expect(pending).resolves.toEqual({ done: true, value: undefined });
    expect((await closedStream()).clientClosed).toBe(true);
  });

  it('the call’s signal aborting mid-stream rejects the read with its reason and closes the connection', async () => {
    server.provider.script.push({ text: envelope('a long answer '.repeat(50), 0.9), stream: { chunkSizes: 4, delayMs: 5 } });
    const controller = new AbortController();
    const reply = await fetchStreaming()('q', { attempt: 0, signal: controller.signal });
    const seen: string[] = [];
    const error = await failureOf(async () => {
      for await (const chunk of reply as AsyncIterable<string>) {
        seen.push(chunk);
        if (seen.length === 2) controller.abort(new Error('user cancelled'));
      }
    });
    expect(error.message).toBe('user cancelled');
    expect((await closedStream()).clientClosed).toBe(true);
  });

  it('hostile reply text stays text: the chunks are the text as sent, an SSE line inside a delta included', async () => {
    server.provider.script.push({ text: HOSTILE, stream: { chunkSizes: 3 } });
    expect((await chunksFrom(await fetchStreaming()('q', { attempt: 0 }))).join('')).toBe(HOSTILE);
  });

  it('a server that answers with one completion instead of a stream is read whole', async () => {
    server.provider.script.push({ text: envelope('Paris', 0.9), stream: false, usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
    const { info, usage } = recording();
    expect(await fetchStreaming()('q', info)).toBe(envelope('Paris', 0.9));
    expect(usage).toEqual([{ inputTokens: 3, outputTokens: 2, totalTokens: 5 }]);
  });

  it('a malformed event, a stream without content or without its end are ProviderErrors that quote nothing of it', async () => {
    const stream = (body: string) => ({ body, headers: { 'content-type': 'text/event-stream' } });
    server.provider.script.push(
      stream(`data: {"choices":[{"index":0,"delta":{"content":"SECRET"}}]}\n\ndata: SECRET not json\n\n`),
      stream('data: {"choices":[{"index":0,"delta":{"refusal":"SECRET"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'),
      stream('data: {"choices":[{"index":0,"delta":{"content":"SECRET"}}]}\n\n'),
    );
    const url = `${server.provider.url}/v1/chat/completions`;
    const errors = [];
    for (let index = 0; index < 3; index++) errors.push(await failureOf(async () => chunksFrom(await fetchStreaming()('q', { attempt: 0 }))));
    expect(errors.map((error) => error.message)).toEqual([
      `${url} sent a malformed event in its stream, event 2 (not JSON, 15 characters; see the error's body).`,
      `${url} streamed no choices[0].delta.content, and the model refused (choices[0].delta.refusal).`,
      `${url} ended its stream after 1 events without a finish_reason or data: [DONE]; the reply may be cut short.`,
    ]);
    for (const error of errors) expect(isTransient(error)).toBe(true);
  });

  it('`stream` must be a boolean, and extraBody cannot set what it sets', () => {
    expect(() => fetchStreaming({ stream: 'yes' })).toThrow(
      new TypeError('Expected `stream` to be a boolean (true to stream the reply to acheck(), which reads it as it arrives), got "yes".'),
    );
    expect(() => fetchStreaming({ stream: false, extraBody: { stream: true } })).toThrow(/^Expected `extraBody` without `stream`, which Booth sets: give `stream: true` as an option/);
    expect(() => fetchStreaming({ extraBody: { stream_options: {} } })).toThrow(/^Expected `extraBody` without `stream_options`/);
  });
});

describe('EventStreamReader', () => {
  it('reads the same events however the stream is split, whatever the line endings (property)', () => {
    const line = fc.string({ unit: 'grapheme', maxLength: 12 }).map((text) => text.replace(/[\r\n]/g, ''));
    const event = fc.record({ type: fc.option(fc.constantFrom('error', 'ping', 'message_start'), { nil: undefined }), data: fc.array(line, { minLength: 1, maxLength: 3 }) });
    fc.assert(
      fc.property(fc.array(event, { maxLength: 6 }), fc.constantFrom('\n', '\r', '\r\n'), fc.array(fc.nat(), { maxLength: 8 }), (events, eol, cuts) => {
        const source = events.map(({ type, data }) => `${type ? `event: ${type}${eol}` : ''}${data.map((text) => `data: ${text}${eol}`).join('')}${eol}`).join('');
        const reader = new EventStreamReader();
        const read = [];
        let at = 0;
        for (const cut of [...cuts.map((cut) => cut % (source.length + 1))].sort((a, b) => a - b)) {
          read.push(...reader.push(source.slice(at, Math.max(at, cut))));
          at = Math.max(at, cut);
        }
        read.push(...reader.push(source.slice(at)), ...reader.end());
        expect(read).toEqual(events.map(({ type, data }) => ({ event: type ?? 'message', data: data.join('\n') })));
      }),
      { numRuns: 300 },
    );
  });

  it('reads every line ending, split anywhere, comments and multi-line data', () => {
    const source = ': keep-alive\r\ndata: {"a":1}\r\n\r\nevent: error\ndata:x\ndata:  y\n\ndata\r\rid: 3\nretry: 10\ndata: last\n';
    const expected = [
      { event: 'message', data: '{"a":1}' },
      { event: 'error', data: 'x\n y' },
      { event: 'message', data: '' },
      { event: 'message', data: 'last' },
    ];
    for (let size = 1; size <= source.length; size++) {
      const reader = new EventStreamReader();
      const events = [];
      for (let at = 0; at < source.length; at += size) events.push(...reader.push(source.slice(at, at + size)));
      events.push(...reader.end());
      expect(events, `pieces of ${size}`).toEqual(expected);
    }
  });
});


describe("docs/adapters.md's opening example, run as a reader copies it", () => {
  const block = (() => {
    const page = readFileSync(new URL('../../docs/adapters.md', import.meta.url), 'utf8');
    return page.split('```ts\n')[1]!.split('```')[0]!;
  })();
  /** The example with its imports given, its endpoint the loopback provider's, and a `draft` that records what a UI would show. */
  async function runExample(url: string) {
    const shown: string[] = [];
    const draft = {
      clear: () => shown.push('<cleared>'),
      show: (text: string) => shown.push(text),
      confirm: (answer: string) => shown.push(`<confirmed ${answer}>`),
      ask: (readings: readonly string[]) => shown.push(`<which of ${readings.join(' | ')}>`),
      withdraw: (status: string) => shown.push(`<withdrawn ${status}>`),
    };
    const code = block
      .replace(/^import .*$/gm, '')
      .replace("'https://api.openai.com/v1'", JSON.stringify(`${url}/v1`))
      .replace('process.env.OPENAI_API_KEY', "'test-key'");
    const run = new Function('acheck', 'openAICompatible', 'draft', `return (async () => { ${code}\nreturn result; })();`);
    const result = (await run(acheck, openAICompatible, draft)) as Awaited<ReturnType<typeof acheck>>;
    return { result, shown };
  }

  it('shows the answer as it arrives, and confirms it only once the verdict is in', async () => {
    server.provider.script.push({ text: envelope('Yes: the 14:10 train, if seats remain.', 0.9), stream: { chunkSizes: 6 } });
    const { result, shown } = await runExample(server.provider.url);
    expect(result.status).toBe('VERIFIED');
    expect(shown.at(-1)).toBe('<confirmed Yes: the 14:10 train, if seats remain.>');
    expect(shown.at(-2)).toBe('Yes: the 14:10 train, if seats remain.');
    expect(shown.filter((line) => !line.startsWith('<')).length).toBeGreaterThan(3);
  });

  it('clears the draft a retry replaces, and asks which reading as soon as the readings are complete', async () => {
    server.provider.script.push({ text: envelope('Perhaps', 0.2), stream: { chunkSizes: 6 } });
    server.provider.script.push({ text: envelope('x'.repeat(400), 0.5, { ambiguous: true, interpretations: ['today', 'tomorrow'] }), stream: { chunkSizes: 6, delayMs: 2 } });
    const { result, shown } = await runExample(server.provider.url);
    expect(result.status).toBe('AMBIGUOUS');
    expect(shown).toContain('<cleared>');
    expect(shown.at(-1)).toBe('<which of today | tomorrow>');
    expect(server.provider.streams.at(-1)!.sent).toBeLessThan(server.provider.streams.at(-1)!.of / 2);
  });
});
