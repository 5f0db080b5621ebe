import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { fromAISDK, fromAnthropic, fromOpenAI, openAICompatible } from '../../src/adapters/index.js';
import { acheck, INSTRUCTIONS, PARSE_RETRY_MARKER } from '../../src/index.js';
import { envelope } from '../fixtures/helpers.js';
import { useProvider } from '../fixtures/provider-server.js';

/**
 * What each adapter puts on the wire, body for body, against a provider on loopback: a chat
 * application's system prompt and history in the provider's native shape, samples that
 * differ, and options refused before any call.
 */

const server = useProvider();

const SYSTEM = 'You are the help desk of Acme Rail. Answer in one sentence.';
const HISTORY = [
  { role: 'user', content: 'I have a ticket from Lyon to Paris.' },
  { role: 'assistant', content: 'Thank you. What would you like to know?' },
] as const;
const QUESTION = 'Can I take an earlier train?';

const fetchAdapter = (extra: object = {}) => openAICompatible({ baseURL: `${server.provider.url}/v1`, model: 'm', ...extra });
const openaiAdapter = (extra: object = {}) => fromOpenAI(new OpenAI({ baseURL: `${server.provider.url}/v1`, apiKey: 'sk-test', maxRetries: 0 }), { model: 'm', ...extra });
const anthropicAdapter = (extra: object = {}) => fromAnthropic(new Anthropic({ baseURL: server.provider.url, apiKey: 'sk-test', maxRetries: 0 }), { model: 'm', ...extra });

describe('a chat application: system prompt and history, in each provider\'s shape', () => {
  it.each([
    ['openAICompatible', fetchAdapter],
    ['fromOpenAI', openaiAdapter],
  ] as const)('%s sends OpenAI messages: system (system prompt, then instructions), the turns, the question', async (_name, adapter) => {
    server.provider.script.push({ text: envelope('Yes, with a flexible fare.', 0.9) });
    const result = await acheck(adapter(), QUESTION, { system: SYSTEM, messages: HISTORY });
    expect(result.status).toBe('VERIFIED');
    expect(server.provider.received[0]?.body).toEqual({
      model: 'm',
      messages: [{ role: 'system', content: `${SYSTEM}\n\n${INSTRUCTIONS}` }, ...HISTORY, { role: 'user', content: QUESTION }],
    });
  });

  it('fromAnthropic sends Messages\' system apart and the turns as messages', async () => {
    server.provider.script.push({ text: envelope('Yes, with a flexible fare.', 0.9) });
    await acheck(anthropicAdapter(), QUESTION, { system: SYSTEM, messages: HISTORY });
    expect(server.provider.received[0]?.body).toEqual({
      max_tokens: 1024,
      model: 'm',
      system: `${SYSTEM}\n\n${INSTRUCTIONS}`,
      messages: [...HISTORY, { role: 'user', content: QUESTION }],
    });
  });

  it('fromAISDK passes system and messages to generateText', async () => {
    const seen: unknown[] = [];
    const callFn = fromAISDK({
      model: 'a-model',
      generateText: async (options) => {
        seen.push(options);
        return { text: envelope('Yes.', 0.9) };
      },
    });
    await acheck(callFn, QUESTION, { system: SYSTEM, messages: HISTORY });
    expect(seen[0]).toEqual({ model: 'a-model', system: `${SYSTEM}\n\n${INSTRUCTIONS}`, messages: [...HISTORY, { role: 'user', content: QUESTION }], abortSignal: expect.any(AbortSignal) });
  });

  it('a retry keeps the system message byte for byte (a cached prefix) and says why in the user turn', async () => {
    server.provider.script.push({ text: 'Sure!' }, { text: envelope('Yes.', 0.9) });
    await acheck(fetchAdapter(), QUESTION, { system: SYSTEM, messages: HISTORY });
    const [first, retry] = server.provider.received.map((r) => r.body['messages'] as Array<{ role: string; content: string }>);
    expect(retry!.slice(0, 3)).toEqual(first!.slice(0, 3));
    expect(retry![3]!.content.startsWith(`${QUESTION}\n\nYour previous response ${PARSE_RETRY_MARKER}`)).toBe(true);
  });

  it("the adapter's own system comes before the run's, in the same system message", async () => {
    server.provider.script.push({ text: envelope('Yes.', 0.9) });
    await acheck(fetchAdapter({ system: 'House rules.' }), QUESTION, { system: SYSTEM });
    expect((server.provider.received[0]?.body['messages'] as unknown[])[0]).toEqual({ role: 'system', content: `House rules.\n\n${SYSTEM}\n\n${INSTRUCTIONS}` });
  });
});

describe('samples that differ', () => {
  const bodies = () => server.provider.received.map((r) => r.body);

  it.each([
    ['openAICompatible', fetchAdapter],
    ['fromOpenAI', openaiAdapter],
  ] as const)('%s: k samples are k distinct seeds at the sample temperature (default 1), even with temperature 0', async (_name, adapter) => {
    server.provider.fallback = () => ({ text: envelope('Paris', 0.9) });
    await acheck(adapter({ temperature: 0 }), 'q', { samples: 3 });
    expect(bodies().map((body) => [body['temperature'], body['seed']])).toEqual([
      [1, 0],
      [1, 1],
      [1, 2],
    ]);
    // A call that is not a sample keeps its temperature, and gets no seed it was not given.
    server.provider.received.length = 0;
    await acheck(adapter({ temperature: 0 }), 'q');
    expect(bodies()[0]).toMatchObject({ temperature: 0 });
    expect(bodies()[0]).not.toHaveProperty('seed');
  });

  it('sampleTemperature and seed set them: sample k is sent seed + k', async () => {
    server.provider.fallback = () => ({ text: envelope('Paris', 0.9) });
    await acheck(fetchAdapter({ sampleTemperature: 0.7, seed: 100 }), 'q', { samples: 2 });
    expect(bodies().map((body) => [body['temperature'], body['seed']])).toEqual([
      [0.7, 100],
      [0.7, 101],
    ]);
    server.provider.received.length = 0;
    await acheck(fetchAdapter({ seed: 100 }), 'q');
    expect(bodies()[0]).toMatchObject({ seed: 100 });
    expect(bodies()[0]).not.toHaveProperty('temperature');
  });

  it('fromAnthropic has no seed: its samples differ by temperature', async () => {
    server.provider.fallback = () => ({ text: envelope('Paris', 0.9) });
    await acheck(anthropicAdapter({ temperature: 0 }), 'q', { samples: 2 });
    expect(bodies().map((body) => [body['temperature'], body['seed']])).toEqual([
      [1, undefined],
      [1, undefined],
    ]);
  });

  it('fromAISDK sends temperature and seed to the SDK', async () => {
    const seen: Array<{ temperature?: number; seed?: number }> = [];
    const callFn = fromAISDK({
      model: 'a-model',
      temperature: 0,
      generateText: async (options) => {
        seen.push(options);
        return { text: envelope('Paris', 0.9) };
      },
    });
    await acheck(callFn, 'q', { samples: 2 });
    expect(seen.map(({ temperature, seed }) => [temperature, seed])).toEqual([
      [1, 0],
      [1, 1],
    ]);
  });

  it('sampleTemperature 0 is a RangeError saying why; a bad temperature or seed a TypeError', () => {
    for (const adapter of [fetchAdapter, openaiAdapter, anthropicAdapter]) {
      expect(() => adapter({ sampleTemperature: 0 })).toThrow(new RangeError(
        '`sampleTemperature: 0` would make every sample the same reply, and the vote of `samples` above 1 unanimous at k times the cost; it is used only for sample calls, so leave it out (default 1), or use `temperature: 0` for single calls.',
      ));
    }
    expect(() => fetchAdapter({ sampleTemperature: 'hot' })).toThrow(new TypeError('Expected `sampleTemperature` to be a number above 0, such as 1, got "hot".'));
    expect(() => fetchAdapter({ temperature: -1 })).toThrow(new TypeError('Expected `temperature` to be a number, 0 or more, got -1.'));
    expect(() => fetchAdapter({ seed: 1.5 })).toThrow(new TypeError('Expected `seed` to be a whole number, got 1.5.'));
  });

  it('a seed at the top of the safe integers still gives each sample its own (seed + sample would round onto one already sent)', async () => {
    server.provider.fallback = () => ({ text: envelope('Paris', 0.9) });
    await acheck(fetchAdapter({ seed: Number.MAX_SAFE_INTEGER - 1 }), 'q', { samples: 4, sampleConcurrency: 1 });
    const seeds = server.provider.received.map((request) => request.body['seed']);
    expect(seeds).toEqual([Number.MAX_SAFE_INTEGER - 1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER - 3, Number.MAX_SAFE_INTEGER - 4]);
  });

  it('extraBody cannot set what Booth sets: the options say it, and samples stay apart', () => {
    expect(() => fetchAdapter({ extraBody: { seed: 7 } })).toThrow(new TypeError('Expected `extraBody` without `seed`, which Booth sets: give it as `seed`: each sample is then sent its own.'));
    expect(() => fetchAdapter({ extraBody: { temperature: 0 } })).toThrow(/^Expected `extraBody` without `temperature`, which Booth sets: give it as `temperature`/);
    for (const key of ['model', 'messages', 'response_format']) expect(() => fetchAdapter({ extraBody: { [key]: 1 } })).toThrow(`without \`${key}\``);
    expect(() => fetchAdapter({ extraBody: 'max_tokens=5' })).toThrow(new TypeError('Expected `extraBody` to be an object of request fields such as { max_tokens: 256 }, got "max_tokens=5".'));
    expect(() => fetchAdapter({ extraBody: { max_tokens: 5 } })).not.toThrow();
  });
});

describe('options refused before any call', () => {
  it('openAICompatible and fromAISDK refuse unknown keys as acheck does, with the nearest name', () => {
    expect(() => fetchAdapter({ tempurature: 0 })).toThrow(new TypeError('Unknown option `tempurature` for openAICompatible(); did you mean `temperature`?'));
    expect(() => fetchAdapter({ colour: 'blue' })).toThrow(/^Unknown option `colour` for openAICompatible\(\); the options are `baseURL`, `model`, /);
    expect(() => fromAISDK({ generateText: async () => ({ text: '' }), model: 'm', sistem: 'x' } as never)).toThrow(
      new TypeError('Unknown option `sistem` for fromAISDK(); did you mean `system`?'),
    );
  });

  it.each([
    ['localhost:18080/v1', 'Expected `baseURL` to start with http:// or https://, such as "http://localhost:11434/v1", got "localhost:18080/v1".'],
    ['notaurl', 'Expected `baseURL` to be a URL such as "http://localhost:11434/v1", got "notaurl".'],
    ['ftp://example.com/v1', 'Expected `baseURL` to start with http:// or https://, such as "http://localhost:11434/v1", got "ftp://example.com/v1".'],
    // Without a scheme the key before `@` is still hidden.
    ['user:sk-KEY@localhost:8080/v1', 'Expected `baseURL` to start with http:// or https://, such as "http://localhost:11434/v1", got "***:***@localhost:8080/v1".'],
    ['sk-KEY@host:8080/v1', 'Expected `baseURL` to be a URL such as "http://localhost:11434/v1", got "***@host:8080/v1".'],
  ])('baseURL %j is a TypeError', (baseURL, message) => {
    expect(() => openAICompatible({ baseURL, model: 'm' })).toThrow(new TypeError(message));
  });

  it('a base URL without /v1 answers 404: one call, not maxRetries + 1, and the run says call_failure', async () => {
    server.provider.fallback = () => ({ status: 404, body: { error: { message: 'no such route' } } });
    const callFn = openAICompatible({ baseURL: server.provider.url, model: 'm' });
    const result = await acheck(callFn, 'q', { maxRetries: 2, callRetries: { retries: 2, minDelayMs: 0 } });
    expect(server.provider.received).toHaveLength(1);
    expect(result.status).toBe('UNCERTAIN');
    expect(result.method).toBe('call_failure');
    expect(result.attempts[0]?.error).toContain('answered 404');
  });
});
