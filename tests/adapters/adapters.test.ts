import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { fromAISDK, fromAnthropic, fromOpenAI, openAICompatible, ProviderError } from '../../src/adapters/index.js';
import { acheck, INSTRUCTIONS } from '../../src/index.js';
import { instructions } from '../../src/decide/prompts.js';
import { answerFormatOf } from '../../src/decide/schema.js';
import { envelope } from '../fixtures/helpers.js';
import { closedPort } from '../fixtures/closed-port.js';
import { anthropicBody, openAIBody, useProvider } from '../fixtures/provider-server.js';
import { z } from 'zod';

const server = useProvider();

/** Resolves once the server has received `count` requests. */
const untilReceived = (count: number) => expect.poll(() => server.provider.received.length, { interval: 5, timeout: 5_000 }).toBeGreaterThanOrEqual(count);

const adapters = () => ({
  fetch: openAICompatible({ baseURL: `${server.provider.url}/v1`, model: 'test-model', apiKey: 'sk-test', temperature: 0, seed: 7 }),
  openai: fromOpenAI(new OpenAI({ baseURL: `${server.provider.url}/v1`, apiKey: 'sk-test', maxRetries: 0 }), { model: 'test-model' }),
  anthropic: fromAnthropic(new Anthropic({ baseURL: server.provider.url, apiKey: 'sk-test', maxRetries: 0 }), { model: 'test-model' }),
});

/** Booth's `usage` when the provider counted `input` and `output` tokens and gave no total of its own. */
const tokens = (inputTokens: number, outputTokens: number, totalTokens = inputTokens + outputTokens) => ({ inputTokens, outputTokens, totalTokens, costUsd: null });

describe.each(['fetch', 'openai', 'anthropic'] as const)('%s adapter against a local server', (name) => {
  /** A provider's `usage` in the adapter's wire format. */
  const wireUsage = (input: number, output: number) =>
    name === 'anthropic' ? { input_tokens: input, output_tokens: output } : { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };

  it('a successful reply goes through acheck()', async () => {
    server.provider.script.push({ text: envelope('Paris', 0.9) });
    const result = await acheck(adapters()[name], 'Capital of France?');
    expect(result.status).toBe('VERIFIED');
    expect(result.answer).toBe('Paris');
    const [request] = server.provider.received;
    expect(request?.path).toBe(name === 'anthropic' ? '/v1/messages' : '/v1/chat/completions');
    expect(request?.body['model']).toBe('test-model');
    // Booth's instructions in the system message, the question alone in the user turn.
    const chat = [{ role: 'user', content: 'Capital of France?' }];
    if (name === 'anthropic') {
      expect(request?.body['system']).toBe(INSTRUCTIONS);
      expect(request?.body['messages']).toEqual(chat);
    } else {
      expect(request?.body['messages']).toEqual([{ role: 'system', content: INSTRUCTIONS }, ...chat]);
    }
  });

  it('429 with Retry-After becomes a ProviderError with status and retryAfterMs, which callRetries honours', async () => {
    server.provider.script.push({ status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'rate limited' } } });
    const error = await Promise.resolve(adapters()[name]('q', { attempt: 0 })).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 429, retryAfterMs: 1000 });
    expect((error as Error).message).toContain('rate limited');

    server.provider.script.push({ status: 429, headers: { 'retry-after-ms': '30' }, body: { error: { message: 'slow down' } } });
    server.provider.script.push({ text: envelope('Paris', 0.9) });
    const result = await acheck(adapters()[name], 'q', { callRetries: { retries: 1, minDelayMs: 1, maxDelayMs: 1 } });
    expect(result.status).toBe('VERIFIED');
    expect(result.attempts[0]?.callTries).toEqual([
      { error: expect.stringContaining('slow down'), delayMs: 30 },
      { error: null, delayMs: null },
    ]);
  });

  it('500 is a failed call with the provider’s message', async () => {
    server.provider.script.push({ status: 500, body: { error: { message: 'upstream exploded' } } });
    const result = await acheck(adapters()[name], 'q', { maxRetries: 0 });
    expect(result.attempts[0]).toMatchObject({ callFailed: true });
    expect(result.attempts[0]?.error).toContain('upstream exploded');
  });

  it('a slow reply is cut by timeoutMs and its request aborted', async () => {
    server.provider.script.push({ text: envelope('late', 0.9), delayMs: 2_000 });
    server.provider.script.push({ text: envelope('Paris', 0.9) });
    const started = Date.now();
    const result = await acheck(adapters()[name], 'q', { timeoutMs: 200 });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(result.status).toBe('REPAIRED');
    expect(result.attempts[0]?.error).toBe('the model call timed out after 200 ms');
  });

  it('the provider’s usage is its attempt’s and adds up in the result, a reply Booth rejected included', async () => {
    server.provider.script.push({ text: envelope('Lyon', 0.2), usage: wireUsage(120, 30) }, { text: envelope('Paris', 0.9), usage: wireUsage(150, 25) });
    const result = await acheck(adapters()[name], 'Capital of France?');
    expect(result.status).toBe('REPAIRED');
    expect(result.attempts.map((attempt) => attempt.usage)).toEqual([tokens(120, 30), tokens(150, 25)]);
    expect(result.usage).toEqual(tokens(270, 55));
  });

  it('a reply without usage, or with counts that are not counts, reports none: usage null, the call fine', async () => {
    const wrong = name === 'anthropic' ? { input_tokens: null, output_tokens: 3 } : { prompt_tokens: '12', completion_tokens: 3, total_tokens: 15 };
    for (const usage of [null, 'lots', wrong]) {
      server.provider.script.push({ text: envelope('Paris', 0.9), usage });
      const result = await acheck(adapters()[name], 'q');
      expect(result.status, JSON.stringify(usage)).toBe('VERIFIED');
      expect(result.attempts[0]?.usage).toBeNull();
      expect(result.usage).toBeNull();
    }
  });

  it('a reply the adapter cannot use is a failed call whose usage still counts', async () => {
    const client = { baseURL: `${server.provider.url}/v1`, apiKey: 'sk-test', maxRetries: 0 };
    const [callFn, error] =
      name === 'anthropic'
        ? [fromAnthropic(new Anthropic({ ...client, baseURL: server.provider.url }), { model: 'm', responseFormat: 'json_schema' }), /no booth_reply tool call/]
        : name === 'openai'
          ? [fromOpenAI(new OpenAI(client), { model: 'm' }), /no message content/]
          : [openAICompatible({ baseURL: client.baseURL, model: 'm' }), /without choices\[0\]\.message\.content/];
    // Anthropic's forced tool not called; OpenAI's refusal, which comes with no content.
    const refusal = { ...openAIBody('', wireUsage(80, 6)), choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: 'I can’t help with that.' }, finish_reason: 'stop' }] };
    server.provider.script.push(name === 'anthropic' ? { text: 'plain words', usage: wireUsage(80, 6) } : { body: refusal });
    const result = await acheck(callFn, 'q', { maxRetries: 0 });
    expect(result.attempts[0]).toMatchObject({ callFailed: true, error: expect.stringMatching(error), usage: tokens(80, 6) });
    expect(result.usage).toEqual(tokens(80, 6));
  });

  it('an abort mid-request rejects with the reason at once', async () => {
    server.provider.script.push({ text: envelope('late', 0.9), delayMs: 2_000 });
    const controller = new AbortController();
    const pending = acheck(adapters()[name], 'q', { signal: controller.signal });
    // Abort once the server holds the request, so no late request of this test meets the next test's script.
    await untilReceived(1);
    controller.abort(new Error('user cancelled'));
    await expect(pending).rejects.toThrow('user cancelled');
  });
});

describe('usage as each provider counts it', () => {
  it.each(['fetch', 'openai'] as const)('%s: total_tokens is the provider’s own total; without one, input plus output', async (name) => {
    // Some providers count tokens (a model's thinking, say) in the total only.
    server.provider.script.push(
      { text: envelope('Paris', 0.9), usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 40 } },
      { text: envelope('Paris', 0.9), usage: { prompt_tokens: 10, completion_tokens: 5 } },
    );
    const callFn = adapters()[name];
    expect((await acheck(callFn, 'q')).usage).toEqual(tokens(10, 5, 40));
    expect((await acheck(callFn, 'q')).usage).toEqual(tokens(10, 5));
  });

  it('anthropic: the cache’s writes and reads are input tokens too', async () => {
    server.provider.script.push(
      { text: envelope('Paris', 0.9), usage: { input_tokens: 20, cache_creation_input_tokens: 1_000, cache_read_input_tokens: 3_000, output_tokens: 50 } },
      { text: envelope('Paris', 0.9), usage: { input_tokens: 20, cache_creation_input_tokens: null, cache_read_input_tokens: null, output_tokens: 50 } },
      { text: envelope('Paris', 0.9), usage: { input_tokens: 20, cache_creation_input_tokens: 'some', output_tokens: 50 } },
    );
    const callFn = adapters().anthropic;
    expect((await acheck(callFn, 'q')).usage).toEqual(tokens(4_020, 50));
    expect((await acheck(callFn, 'q')).usage).toEqual(tokens(20, 50));
    expect((await acheck(callFn, 'q')).usage).toBeNull();
  });
});

describe('openAICompatible', () => {
  it('sends the key, headers, temperature and extra body', async () => {
    server.provider.script.push({ text: envelope('x', 0.9) });
    const callFn = openAICompatible({ baseURL: `${server.provider.url}/v1/`, model: 'm', apiKey: 'sk-1', headers: { 'x-team': 'qa' }, temperature: 0.2, extraBody: { max_tokens: 64 } });
    await callFn('hello', { attempt: 0 });
    const [request] = server.provider.received;
    expect(request?.headers['authorization']).toBe('Bearer sk-1');
    expect(request?.headers['x-team']).toBe('qa');
    expect(request?.body).toEqual({ model: 'm', messages: [{ role: 'user', content: 'hello' }], temperature: 0.2, max_tokens: 64 });
  });

  it('an empty or malformed body is a clear error', async () => {
    const callFn = openAICompatible({ baseURL: `${server.provider.url}/v1`, model: 'm' });
    server.provider.script.push({ body: '' });
    await expect(callFn('q', { attempt: 0 })).rejects.toThrow(/empty body/);
    server.provider.script.push({ body: '{"choices": [' });
    await expect(callFn('q', { attempt: 0 })).rejects.toThrow(/malformed body/);
    server.provider.script.push({ body: { choices: [] } });
    await expect(callFn('q', { attempt: 0 })).rejects.toThrow(/choices\[0\]\.message\.content/);
  });

  it('a server that refuses the connection fails the call with the URL and the cause, ECONNREFUSED', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const error = await Promise.resolve(openAICompatible({ baseURL: url, model: 'm' })('q', { attempt: 0 })).then(
      () => null,
      (thrown: unknown) => thrown as Error,
    );
    expect(error?.message).toMatch(new RegExp(`^POST ${url}/chat/completions failed: connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+$`));
    expect((error?.cause as Error | undefined)?.message).toBe('fetch failed');
  });

  it('an aborted request still rejects with the abort, not as a network failure', async () => {
    server.provider.script.push({ text: envelope('x', 0.9), delayMs: 2_000 });
    const controller = new AbortController();
    const call = openAICompatible({ baseURL: `${server.provider.url}/v1`, model: 'm' })('q', { attempt: 0, signal: controller.signal });
    await untilReceived(1);
    controller.abort(new Error('caller gave up'));
    await expect(call).rejects.toThrow('caller gave up');
  });

  it('bad options are TypeErrors naming the option', () => {
    expect(() => openAICompatible({ baseURL: 'not a url', model: 'm' })).toThrow(/`baseURL`/);
    expect(() => openAICompatible({ baseURL: 'http://x', model: '' })).toThrow(/`model`/);
  });
});

describe('fromAISDK', () => {
  it('passes the model, the prompt and the abort signal to generateText', async () => {
    const seen: unknown[] = [];
    const callFn = fromAISDK({
      model: 'a-model',
      generateText: async (options) => {
        seen.push(options);
        return { text: envelope('Paris', 0.9) };
      },
    });
    const controller = new AbortController();
    const result = await acheck(callFn, 'q', { signal: controller.signal });
    expect(result.answer).toBe('Paris');
    // acheck() gives every call a signal of its own, which the caller's aborts.
    expect(seen[0]).toEqual({ model: 'a-model', system: INSTRUCTIONS, messages: [{ role: 'user', content: 'q' }], abortSignal: expect.any(AbortSignal) });
    let given: AbortSignal | undefined;
    const pending = acheck(
      fromAISDK({
        model: 'a-model',
        generateText: (options) => {
          given = options.abortSignal;
          return new Promise(() => {});
        },
      }),
      'q',
      { signal: controller.signal },
    );
    await expect.poll(() => given).toBeDefined();
    controller.abort(new Error('user cancelled'));
    await expect(pending).rejects.toThrow('user cancelled');
    expect(given?.aborted).toBe(true);
  });

  it('reports the usage generateText returns, by version 5’s names or version 4’s; unknown counts report none', async () => {
    const cases = [
      [{ inputTokens: 9, outputTokens: 3, totalTokens: 14 }, tokens(9, 3, 14)],
      [{ inputTokens: 9, outputTokens: 3, totalTokens: undefined }, tokens(9, 3)],
      [{ promptTokens: 9, completionTokens: 3, totalTokens: 12 }, tokens(9, 3)],
      // Version 4 says NaN, version 5 undefined, when the provider gave no counts.
      [{ promptTokens: Number.NaN, completionTokens: Number.NaN, totalTokens: Number.NaN }, null],
      [{ inputTokens: undefined, outputTokens: undefined, totalTokens: undefined }, null],
      [undefined, null],
    ] as const;
    for (const [usage, expected] of cases) {
      const callFn = fromAISDK({ model: 'a-model', generateText: async () => ({ text: envelope('Paris', 0.9), usage }) });
      expect((await acheck(callFn, 'q')).usage, JSON.stringify(usage)).toEqual(expected);
    }
  });

  it('the SDK’s HTTP errors (APICallError’s statusCode, or a RetryError’s last) become ProviderErrors that callRetries reads', async () => {
    const apiError = Object.assign(new Error('Incorrect API key provided'), { statusCode: 401, responseHeaders: {} });
    const retried = Object.assign(new Error('Failed after 3 attempts. Last error: Rate limited'), {
      lastError: Object.assign(new Error('Rate limited'), { statusCode: 429, responseHeaders: { 'retry-after-ms': '7' } }),
    });
    const failing = (error: Error) => fromAISDK({ model: 'm', generateText: () => Promise.reject(error) });
    const first = await Promise.resolve(failing(apiError)('q', { attempt: 0 })).catch((thrown: unknown) => thrown);
    expect(first).toBeInstanceOf(ProviderError);
    expect(first).toMatchObject({ status: 401, retryAfterMs: null, message: 'Incorrect API key provided', cause: apiError });
    const second = await Promise.resolve(failing(retried)('q', { attempt: 0 })).catch((thrown: unknown) => thrown);
    expect(second).toMatchObject({ status: 429, retryAfterMs: 7, message: 'Failed after 3 attempts. Last error: Rate limited' });
    // A 401 ends the run at once; an error without a status passes as it is.
    const result = await acheck(failing(apiError), 'q', { maxRetries: 2, callRetries: { retries: 2, minDelayMs: 0 } });
    expect(result.method).toBe('call_failure');
    expect(result.attempts).toHaveLength(1);
    const plain = new Error('no status');
    await expect(Promise.resolve(failing(plain)('q', { attempt: 0 }))).rejects.toBe(plain);
  });

  it('reports the usage generateObject returns, and the usage its error carries when it could not read the reply', async () => {
    const reply = { ambiguous: false, interpretations: [], chosen_interpretation: null, answer: 'Paris', confidence: 0.9 };
    // What the SDK's NoObjectGeneratedError carries: the reply's text and usage.
    const unreadable = Object.assign(new Error('No object generated: could not parse the response.'), { text: 'Paris', usage: { inputTokens: 30, outputTokens: 2, totalTokens: 32 } });
    let calls = 0;
    const callFn = fromAISDK({
      model: 'a-model',
      generateText: async () => ({ text: 'unused' }),
      generateObject: async () => {
        if (calls++ === 0) throw unreadable;
        return { object: reply, usage: { inputTokens: 40, outputTokens: 8, totalTokens: 48 } };
      },
      responseFormat: 'json_object',
    });
    const result = await acheck(callFn, 'q');
    expect(result.status).toBe('REPAIRED');
    expect(result.attempts[0]).toMatchObject({ callFailed: true, error: unreadable.message, usage: tokens(30, 2) });
    expect(result.attempts[1]?.usage).toEqual(tokens(40, 8));
    expect(result.usage).toEqual(tokens(70, 10));
  });
});

describe('native structured output: the envelope’s JSON Schema, a typed answer’s schema inside', () => {
  const City = z.object({ city: z.string(), population: z.number() });
  const tokyo = { city: 'Tokyo', population: 37_400_000 };
  /** The reply Booth asks for, written out: what a provider receives as the schema. */
  const envelopeWith = (answer: object) => ({
    type: 'object',
    properties: {
      ambiguous: { type: 'boolean' },
      interpretations: { type: 'array', items: { type: 'string' } },
      chosen_interpretation: { type: ['string', 'null'] },
      answer,
      confidence: { type: 'number', minimum: 0, maximum: 1 },
    },
    required: ['ambiguous', 'interpretations', 'chosen_interpretation', 'answer', 'confidence'],
    additionalProperties: false,
  });
  const citySchema = {
    type: 'object',
    properties: { city: { type: 'string' }, population: { type: 'number' } },
    required: ['city', 'population'],
  };
  const SYSTEM = 'You answer questions about cities.';
  /** The system message: the adapter's system, then Booth's instructions for a City. */
  const cityInstructions = `${SYSTEM}\n\n${instructions(answerFormatOf(City))}`;

  it.each(['fetch', 'openai'] as const)('%s: response_format json_schema and a system message, exactly', async (name) => {
    server.provider.script.push({ text: envelope(tokyo, 0.9) });
    const callFn =
      name === 'fetch'
        ? openAICompatible({ baseURL: `${server.provider.url}/v1`, model: 'm', system: SYSTEM, responseFormat: 'json_schema' })
        : fromOpenAI(new OpenAI({ baseURL: `${server.provider.url}/v1`, apiKey: 'sk-test', maxRetries: 0 }), {
            model: 'm',
            system: SYSTEM,
            responseFormat: 'json_schema',
          });
    const result = await acheck(callFn, 'Largest city in Japan?', { schema: City });
    expect(result.answer).toEqual(tokyo);
    expect(server.provider.received[0]?.body).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: cityInstructions },
        { role: 'user', content: 'Largest city in Japan?' },
      ],
      response_format: { type: 'json_schema', json_schema: { name: 'booth_reply', schema: envelopeWith(citySchema) } },
    });
  });

  it('without a schema the answer is a string, number or boolean; json_object asks for any object', async () => {
    server.provider.script.push({ text: envelope('Paris', 0.9) }, { text: envelope('Paris', 0.9) });
    const asking = (responseFormat: 'json_schema' | 'json_object') =>
      openAICompatible({ baseURL: `${server.provider.url}/v1`, model: 'm', responseFormat });
    expect((await acheck(asking('json_schema'), 'q')).status).toBe('VERIFIED');
    expect((await acheck(asking('json_object'), 'q')).status).toBe('VERIFIED');
    expect(server.provider.received[0]?.body['response_format']).toEqual({
      type: 'json_schema',
      json_schema: { name: 'booth_reply', schema: envelopeWith({ type: ['string', 'number', 'boolean'] }) },
    });
    expect(server.provider.received[1]?.body['response_format']).toEqual({ type: 'json_object' });
  });

  it('anthropic: one forced tool whose input schema is the envelope; its input is the reply', async () => {
    const reply = { ambiguous: false, interpretations: [], chosen_interpretation: null, answer: tokyo, confidence: 0.9 };
    server.provider.script.push({
      body: { ...anthropicBody(''), content: [{ type: 'tool_use', id: 'toolu_1', name: 'booth_reply', input: reply }], stop_reason: 'tool_use' },
    });
    const client = new Anthropic({ baseURL: server.provider.url, apiKey: 'sk-test', maxRetries: 0 });
    const callFn = fromAnthropic(client, { model: 'm', system: SYSTEM, responseFormat: 'json_schema' });
    const result = await acheck(callFn, 'Largest city in Japan?', { schema: City });
    expect(result.status).toBe('VERIFIED');
    expect(result.answer).toEqual(tokyo);
    expect(result.attempts[0]?.rawText).toBe(JSON.stringify(reply));
    expect(server.provider.received[0]?.body).toEqual({
      max_tokens: 1024,
      model: 'm',
      system: cityInstructions,
      tools: [{ name: 'booth_reply', description: "Give your reply as this tool's input.", input_schema: envelopeWith(citySchema) }],
      tool_choice: { type: 'tool', name: 'booth_reply' },
      messages: [{ role: 'user', content: 'Largest city in Japan?' }],
    });
  });

  it("anthropic: its own system blocks come first, as given, then the run's as a block; tools of the caller's cannot join the forced one", async () => {
    server.provider.script.push({ text: envelope('Paris', 0.9) });
    const blocks = [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' } }];
    const client = new Anthropic({ baseURL: server.provider.url, apiKey: 'sk-test', maxRetries: 0 });
    await acheck(fromAnthropic(client, { model: 'm', system: blocks }), 'q', { system: 'You are a guide.' });
    expect(server.provider.received[0]?.body['system']).toEqual([...blocks, { type: 'text', text: `You are a guide.\n\n${INSTRUCTIONS}` }]);
    // Anything else would be sent as what it is not: `${String(own)}` made an object "[object Object]".
    for (const system of [{ text: 'Be brief.' }, [{ type: 'image', source: {} }], ['Be brief.'], 7]) {
      expect(() => fromAnthropic(client, { model: 'm', system: system as never })).toThrow(
        new TypeError(`Expected \`system\` to be a string or an array of text blocks ({ type: 'text', text }), got ${Array.isArray(system) ? 'an array' : typeof system === 'number' ? '7' : 'an object'}.`),
      );
    }
    expect(() => fromAnthropic(client, { model: 'm', responseFormat: 'json_schema', tools: [] })).toThrow(
      "`responseFormat: 'json_schema'` asks Anthropic for the reply through one forced tool of Booth's, so `tools` and `tool_choice` cannot be given too",
    );
  });

  it('anthropic: a reply without the forced tool call is a failed call, recorded', async () => {
    server.provider.script.push({ text: 'plain words' });
    const callFn = fromAnthropic(new Anthropic({ baseURL: server.provider.url, apiKey: 'sk-test', maxRetries: 0 }), { model: 'm', responseFormat: 'json_schema' });
    const result = await acheck(callFn, 'q', { maxRetries: 0 });
    expect(result.attempts[0]).toMatchObject({ callFailed: true, error: 'The Anthropic client returned no booth_reply tool call, though the request forced one.' });
  });

  it('the AI SDK: generateObject with the envelope wrapped by jsonSchema(), or without a schema', async () => {
    const seen: unknown[] = [];
    const wrapped = (schema: object) => ({ wrapped: schema });
    const generateObject = async (options: object) => {
      seen.push(options);
      return { object: { ambiguous: false, interpretations: [], chosen_interpretation: null, answer: tokyo, confidence: 0.9 } };
    };
    const generateText = async () => ({ text: 'unused' });
    const typed = fromAISDK({ generateText, generateObject, jsonSchema: wrapped, model: 'a-model', system: SYSTEM, responseFormat: 'json_schema' });
    const result = await acheck(typed, 'Largest city in Japan?', { schema: City });
    expect(result.answer).toEqual(tokyo);
    expect(seen[0]).toEqual({
      model: 'a-model',
      system: cityInstructions,
      messages: [{ role: 'user', content: 'Largest city in Japan?' }],
      abortSignal: expect.any(AbortSignal),
      schema: { wrapped: envelopeWith(citySchema) },
      schemaName: 'booth_reply',
    });
    const anyObject = fromAISDK({ generateText, generateObject, model: 'a-model', responseFormat: 'json_object' });
    expect((await acheck(anyObject, 'q', { schema: City })).status).toBe('VERIFIED');
    expect(seen[1]).toEqual({ model: 'a-model', system: expect.any(String), messages: [{ role: 'user', content: 'q' }], abortSignal: expect.any(AbortSignal), output: 'no-schema' });
  });

  it('bad adapter options are TypeErrors naming the option and the fix', () => {
    expect(() => openAICompatible({ baseURL: 'http://x', model: 'm', responseFormat: 'xml' as never })).toThrow(
      'Expected `responseFormat` to be \'text\', \'json_object\' or \'json_schema\', got "xml".',
    );
    expect(() => fromAnthropic({} as never, { model: 'm', responseFormat: 'json_object' as never })).toThrow(
      "Expected `responseFormat` to be 'text' or 'json_schema', got",
    );
    expect(() => fromOpenAI({} as never, { model: 'm', system: 42 as never })).toThrow('Expected `system` to be a string (a system message), got');
    expect(() => fromAISDK({ generateText: async () => ({ text: '' }), model: 'm', responseFormat: 'json_schema' })).toThrow(
      "`responseFormat: 'json_schema'` needs the SDK's object output: pass `generateObject` (from 'ai') too.",
    );
  });
});
