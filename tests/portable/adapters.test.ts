// A core test for every runtime: vitest and the built package only (see tests/portable/README.md).
import { describe, expect, it } from 'vitest';
import { acheck } from 'boothjs';
import { fromOpenAI, type OpenAIClientLike, openAICompatible, ProviderError, retryAfter } from 'boothjs/adapters';
import { envelope } from 'boothjs/testing';

/** A request as the stand-in server received it. */
interface Received {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

/** A reply of the stand-in server: its status, body and headers. */
type Answer = { readonly status?: number; readonly body: string | ReadableStream<Uint8Array>; readonly headers?: Record<string, string> };

const completion = (content: string, usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 }) =>
  JSON.stringify({ choices: [{ message: { role: 'assistant', content } }], usage });

/**
 * Runs `body` with the runtime's `fetch` replaced by a stand-in that answers from `answers`,
 * one per request, and records the requests. `openAICompatible` takes no `fetch` of its own,
 * so the global is replaced, and always put back.
 */
async function withFetch<T>(answers: readonly Answer[], body: (received: Received[]) => Promise<T>): Promise<T> {
  const original = globalThis.fetch;
  const received: Received[] = [];
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    received.push({
      url: String(input),
      method: init?.method ?? 'GET',
      headers: new Headers(init?.headers),
      body: JSON.parse(String(init?.body)) as Record<string, unknown>,
    });
    const answer = answers[received.length - 1];
    if (answer === undefined) throw new Error(`fetch stand-in: no answer for request ${received.length}`);
    return new Response(answer.body, { status: answer.status ?? 200, headers: { 'content-type': 'application/json', ...answer.headers } });
  }) as typeof fetch;
  try {
    return await body(received);
  } finally {
    globalThis.fetch = original;
  }
}

describe('openAICompatible against a fetch stand-in', () => {
  it('posts the chat to <baseURL>/chat/completions with the key, and the reply goes through acheck()', async () => {
    const model = openAICompatible({ baseURL: 'https://llm.example/v1/', model: 'test-model', apiKey: 'sk-test', temperature: 0, extraBody: { max_tokens: 64 } });
    await withFetch([{ body: completion(envelope('Paris', 0.9)) }], async (received) => {
      const result = await acheck(model, 'Capital of France?', { system: 'Answer tersely.' });
      expect(result.status).toBe('VERIFIED');
      expect(result.answer).toBe('Paris');
      expect(received).toHaveLength(1);
      const [request] = received;
      expect(request?.url).toBe('https://llm.example/v1/chat/completions');
      expect(request?.method).toBe('POST');
      expect(request?.headers.get('authorization')).toBe('Bearer sk-test');
      expect(request?.headers.get('content-type')).toContain('application/json');
      expect(request?.body).toMatchObject({ model: 'test-model', temperature: 0, max_tokens: 64 });
      const messages = request?.body['messages'] as Array<{ role: string; content: string }>;
      expect(messages.map((message) => message.role)).toEqual(['system', 'user']);
      expect(messages[0]?.content).toContain('Answer tersely.');
      expect(messages[1]?.content).toContain('Capital of France?');
    });
  });

  it('reports the tokens the provider counted', async () => {
    const model = openAICompatible({ baseURL: 'https://llm.example/v1', model: 'm' });
    await withFetch([{ body: completion(envelope('Lyon', 0.2)) }, { body: completion(envelope('Paris', 0.9)) }], async () => {
      const result = await acheck(model, 'Capital of France?');
      expect(result.status).toBe('REPAIRED');
      expect(result.attempts[0]?.usage).toEqual({ inputTokens: 12, outputTokens: 5, totalTokens: 17, costUsd: null });
      expect(result.usage).toEqual({ inputTokens: 24, outputTokens: 10, totalTokens: 34, costUsd: null });
    });
  });

  it('a 429 is a ProviderError with the wait the provider asked for, and callRetries retries it', async () => {
    const model = openAICompatible({ baseURL: 'https://llm.example/v1', model: 'm' });
    const busy = { status: 429, body: JSON.stringify({ error: { message: 'Rate limit reached' } }), headers: { 'retry-after-ms': '5' } };
    await withFetch([busy], async () => {
      const error = await Promise.resolve(model('q', { attempt: 0 } as never)).then(
        () => null,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).status).toBe(429);
      expect((error as ProviderError).retryAfterMs).toBe(5);
      expect((error as Error).message).toContain('Rate limit reached');
    });
    await withFetch([busy, { body: completion(envelope('Paris', 0.9)) }], async (received) => {
      const result = await acheck(model, 'q', { callRetries: { retries: 2, minDelayMs: 1, maxDelayMs: 10 } });
      expect(result.status).toBe('VERIFIED');
      expect(received).toHaveLength(2);
      expect(result.attempts[0]?.callTries.map((attempt) => attempt.error === null)).toEqual([false, true]);
    });
  });

  it('a 401 ends the run at once, UNCERTAIN by call_failure, however many attempts were left', async () => {
    const model = openAICompatible({ baseURL: 'https://llm.example/v1', model: 'm', apiKey: 'sk-wrong' });
    await withFetch([{ status: 401, body: JSON.stringify({ error: { message: 'Incorrect API key' } }) }], async (received) => {
      const result = await acheck(model, 'q', { maxRetries: 3, callRetries: { retries: 3, minDelayMs: 1 } });
      expect(result.status).toBe('UNCERTAIN');
      expect(result.method).toBe('call_failure');
      expect(received).toHaveLength(1);
      expect(result.attempts[0]?.callTries[0]?.permanent).toBe(true);
      expect(result.attempts[0]?.error).toContain('401');
      expect(result.attempts[0]?.error).not.toContain('sk-wrong');
    });
  });

  it('a body that is not a chat completion fails the call, saying what is wrong with it', async () => {
    const model = openAICompatible({ baseURL: 'https://llm.example/v1', model: 'm' });
    await withFetch([{ body: '<html>oops</html>' }, { body: JSON.stringify({ choices: [] }) }], async () => {
      const result = await acheck(model, 'q');
      expect(result.status).toBe('UNCERTAIN');
      expect(result.attempts[0]?.error).toContain('malformed body');
      expect(result.attempts[1]?.error).toContain('its choices are empty');
    });
  });

  it('refuses a bad option before any call', () => {
    expect(() => openAICompatible({ baseURL: 'localhost:8080/v1', model: 'm' })).toThrow('http');
    expect(() => openAICompatible({ baseURL: 'http://x', model: '' })).toThrow('`model`');
    expect(() => openAICompatible({ baseURL: 'http://x', model: 'm', tempurature: 0 } as never)).toThrow('temperature');
    expect(() => openAICompatible({ baseURL: 'http://x', model: 'm', extraBody: { messages: [] } })).toThrow(TypeError);
  });

  it('retryAfter() reads retry-after-ms and retry-after from Web Headers', () => {
    expect(retryAfter(new Headers({ 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfter(new Headers({ 'retry-after': '2' }))).toBe(2_000);
    expect(retryAfter(new Headers())).toBeNull();
  });
});

/**
 * A streamed chat completion as bytes in pieces of `size` (a multi-byte character split
 * across pieces included), and a record of whether the reader cancelled the body: the
 * stand-in's connection closed early.
 */
function eventStream(text: string, size: number, timer = true, usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 }) {
  const chunk = (fields: object) => `data: ${JSON.stringify({ object: 'chat.completion.chunk', ...fields })}\r\n\r\n`;
  const deltas = [];
  for (let at = 0; at < text.length; at += 3) deltas.push(chunk({ choices: [{ index: 0, delta: { content: text.slice(at, at + 3) }, finish_reason: null }] }));
  const source = [
    ': keep-alive\n\n',
    chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
    ...deltas,
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
    chunk({ choices: [], usage }),
    'data: [DONE]\n\n',
  ].join('');
  const bytes = new TextEncoder().encode(source);
  const state = { sent: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // A timer between pieces, or for byte-sized pieces only a turn of the microtask queue.
      await (timer ? new Promise((resolve) => setTimeout(resolve, 0)) : Promise.resolve());
      if (state.sent >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(state.sent, state.sent + size));
      state.sent += size;
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { body, state, length: bytes.length };
}

describe('openAICompatible with stream: true against a fetch stand-in', () => {
  it('reads the server-sent events as they arrive, in pieces of any size, and reports the usage of the last chunk', async () => {
    const model = openAICompatible({ baseURL: 'https://llm.example/v1', model: 'm', stream: true });
    const reply = envelope('Zürich — 🇨🇭', 0.9);
    for (const size of [1, 7, 64, 4096]) {
      const { body } = eventStream(reply, size, size >= 64);
      await withFetch([{ body, headers: { 'content-type': 'text/event-stream' } }], async (received) => {
        const result = await acheck(model, 'Largest city of Switzerland?');
        expect(result.status).toBe('VERIFIED');
        expect(result.answer).toBe('Zürich — 🇨🇭');
        expect(result.attempts[0]?.rawText).toBe(reply);
        expect(result.usage).toEqual({ inputTokens: 12, outputTokens: 5, totalTokens: 17, costUsd: null });
        expect(received[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      });
    }
  });

  it('an ambiguous reply ends AMBIGUOUS before it is whole, and the body is cancelled', async () => {
    const model = openAICompatible({ baseURL: 'https://llm.example/v1', model: 'm', stream: true });
    const reply = JSON.stringify({ ambiguous: true, interpretations: ['Paris, France', 'Paris, Texas'], chosen_interpretation: null, answer: 'never needed '.repeat(50), confidence: 0.5 });
    const { body, state, length } = eventStream(reply, 16);
    await withFetch([{ body, headers: { 'content-type': 'text/event-stream' } }], async () => {
      const result = await acheck(model, 'Where is Paris?');
      expect(result.status).toBe('AMBIGUOUS');
      expect(result.interpretations).toEqual(['Paris, France', 'Paris, Texas']);
    });
    expect(state.cancelled).toBe(true);
    expect(state.sent < length).toBe(true);
  });
});

describe('fromOpenAI with a client stand-in', () => {
  it('sends the chat through chat.completions.create and passes the abort signal', async () => {
    const bodies: Array<Record<string, unknown>> = [];
    const signals: unknown[] = [];
    const client: OpenAIClientLike = {
      chat: {
        completions: {
          create: async (body, options) => {
            bodies.push(body);
            signals.push(options?.signal);
            return { choices: [{ message: { content: envelope('Paris', 0.9) } }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } };
          },
        },
      },
    };
    const result = await acheck(fromOpenAI(client, { model: 'gpt-test', temperature: 0 }), 'Capital of France?', { timeoutMs: 5_000 });
    expect(result.status).toBe('VERIFIED');
    expect(result.usage?.totalTokens).toBe(5);
    expect(bodies[0]).toMatchObject({ model: 'gpt-test', temperature: 0 });
    expect((bodies[0]?.['messages'] as unknown[]).length).toBe(2);
    expect(signals[0]).toBeInstanceOf(AbortSignal);
  });

  it('an HTTP error of the client becomes a ProviderError that callRetries honours', async () => {
    let calls = 0;
    const client: OpenAIClientLike = {
      chat: {
        completions: {
          create: async () => {
            calls += 1;
            if (calls === 1) throw Object.assign(new Error('Service Unavailable'), { status: 503, headers: { 'retry-after-ms': '1' } });
            return { choices: [{ message: { content: envelope('Paris', 0.9) } }] };
          },
        },
      },
    };
    const result = await acheck(fromOpenAI(client, { model: 'gpt-test' }), 'q', { callRetries: { retries: 1, minDelayMs: 1 } });
    expect(result.status).toBe('VERIFIED');
    expect(calls).toBe(2);
    expect(result.attempts[0]?.callTries[0]?.error).toContain('Service Unavailable');
    expect(result.attempts[0]?.callTries[1]?.error).toBeNull();
  });
});
