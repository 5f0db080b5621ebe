import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { openAICompatible, ProviderError } from '../../src/adapters/index.js';
import { acheck, check, CheckpointError, memoryStore } from '../../src/index.js';
import { fileStore } from '../../src/stores/node.js';
import { redactUrls, shownUrl } from '../../src/util/urls.js';
import { toHtml } from '../../src/visualize/index.js';
import { closedPort } from '../fixtures/closed-port.js';
import { useProvider } from '../fixtures/provider-server.js';
import { envelope } from '../fixtures/helpers.js';

/**
 * Nothing the caller asked telemetry not to record reaches a span, on any path a check can
 * take: every attribute, event and status of every span is searched for two markers, one
 * inside the question (so inside every prompt) and one inside every reply. Recording on, the
 * same runs show the markers where they belong, which proves each run went where it claims.
 */
const PROMPT = 'PROMPT-MARK-4f1c';
const REPLY = 'REPLY-MARK-9b2e';
const QUESTION = `Which city is meant? ${PROMPT}`;

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = tracerProvider.getTracer('secrets-test');
const server = useProvider();

afterAll(async () => {
  await tracerProvider.shutdown();
});
beforeEach(() => {
  exporter.reset();
});

/** Everything a span exports that can hold text: name, attributes, events and their attributes, status, links. */
function spanText(spans: readonly ReadableSpan[] = exporter.getFinishedSpans()): string {
  return JSON.stringify(
    spans.map((span) => ({
      name: span.name,
      attributes: span.attributes,
      events: span.events.map((event) => ({ name: event.name, attributes: event.attributes ?? {} })),
      status: span.status,
      links: span.links.map((link) => link.attributes ?? {}),
    })),
  );
}

const attributesOf = (name: string, key: string) =>
  exporter
    .getFinishedSpans()
    .filter((span) => span.name === name)
    .map((span) => span.attributes[key]);

const checkStatus = () => exporter.getFinishedSpans().find((span) => span.name === 'booth.check')?.status.message ?? '';

interface Flags {
  readonly recordPrompts: boolean;
  readonly recordReplies: boolean;
}

const endpoint = () => openAICompatible({ baseURL: `${server.provider.url}/v1`, model: 'test-model' });

/** A run's outcome: its result, or what it threw. */
async function outcome(run: () => unknown): Promise<unknown> {
  try {
    return await run();
  } catch (error) {
    return error;
  }
}

/** A checkpoint of QUESTION left behind by a run stopped in its second attempt. */
async function interrupted(store: ReturnType<typeof memoryStore>): Promise<void> {
  const controller = new AbortController();
  const run = acheck(
    async (_prompt, info) => {
      if (info.attempt === 1) controller.abort(new Error('process going down'));
      return 'not an envelope';
    },
    QUESTION,
    { maxRetries: 2, checkpoint: store, key: 'k', signal: controller.signal },
  );
  await expect(run).rejects.toThrow('process going down');
}

interface Scenario {
  readonly name: string;
  readonly run: (telemetry: { tracer: typeof tracer } & Flags) => Promise<unknown>;
  /** What the caller got holds the marker(s) telemetry must keep out: the path really carried them. */
  readonly carries: readonly string[];
  /** With recording on, where the markers show. */
  readonly recorded: () => void;
}

const scenarios: Scenario[] = [
  {
    name: 'a checkpoint of a different run (another prompt)',
    run: async (telemetry) => {
      const store = memoryStore();
      await interrupted(store);
      return outcome(() => acheck(endpoint(), `${QUESTION} (reworded)`, { checkpoint: store, key: 'k', maxRetries: 2, telemetry }));
    },
    carries: [],
    recorded: () => expect(attributesOf('booth.check', 'booth.prompt')).toEqual([`${QUESTION} (reworded)`]),
  },
  {
    name: 'a corrupt checkpoint file, which JSON.parse quotes',
    run: async (telemetry) => {
      const dir = mkdtempSync(join(tmpdir(), 'booth-secrets-'));
      writeFileSync(join(dir, 'k.json'), PROMPT);
      return outcome(() => acheck(endpoint(), QUESTION, { checkpoint: fileStore(dir), key: 'k', telemetry }));
    },
    carries: [],
    recorded: () => expect(attributesOf('booth.check', 'booth.prompt')).toEqual([QUESTION]),
  },
  {
    name: 'provider HTTP errors with bodies: an explanation, an HTML page, a validation error echoing the prompt',
    run: (telemetry) => {
      server.provider.script.push(
        { status: 500, body: { error: { message: `upstream said ${REPLY}` } } },
        { status: 502, body: `<html><body>Bad gateway ${REPLY}</body></html>` },
      );
      server.provider.fallback = (request) => ({ status: 422, body: { detail: [{ msg: 'invalid', input: request['messages'] }] } });
      return outcome(() => acheck(endpoint(), QUESTION, { maxRetries: 2, telemetry }));
    },
    carries: [REPLY],
    recorded: () => {
      expect(attributesOf('booth.attempt', 'booth.attempt.error')[0]).toContain(REPLY);
      expect(attributesOf('booth.attempt', 'booth.attempt.prompt')[0]).toContain(PROMPT);
    },
  },
  {
    name: 'successful responses that are not chat completions',
    run: (telemetry) => {
      server.provider.script.push(
        { body: `not json at all ${REPLY}` },
        { body: { choices: [{ message: { role: 'assistant', content: null, refusal: REPLY } }] } },
        { body: { choices: [], note: REPLY } },
      );
      return outcome(() => acheck(endpoint(), QUESTION, { maxRetries: 2, telemetry }));
    },
    // The body is on the error, not in its message: the caller's result says what went wrong, not what it said.
    carries: [],
    recorded: () => expect(attributesOf('booth.attempt', 'booth.attempt.error')[0]).toMatch(/malformed body/),
  },
  {
    name: 'unparseable replies',
    run: (telemetry) => {
      server.provider.script.push({ text: `${REPLY} and no JSON` }, { text: `{"answer": "${REPLY}", "confidence": 7}` });
      return outcome(() => acheck(endpoint(), QUESTION, { maxRetries: 1, telemetry }));
    },
    carries: [REPLY],
    recorded: () => expect(attributesOf('booth.attempt', 'booth.attempt.reply')[0]).toContain(REPLY),
  },
  {
    name: 'a parseFn throwing with the reply in its message, in a single call and in samples',
    run: async (telemetry) => {
      server.provider.fallback = () => ({ text: `${REPLY} in the provider's own format` });
      const parseFn = (text: string): never => {
        throw new Error(`cannot read ${text}`);
      };
      const single = await acheck(endpoint(), QUESTION, { parseFn, maxRetries: 0, telemetry });
      const sampled = await acheck(endpoint(), QUESTION, { parseFn, samples: 2, maxRetries: 0, telemetry });
      return [single, sampled];
    },
    carries: [REPLY],
    recorded: () => {
      expect(attributesOf('booth.attempt', 'booth.attempt.error')[0]).toContain(`parseFn threw: cannot read ${REPLY}`);
      expect(attributesOf('booth.sample', 'booth.error')[0]).toContain(`parseFn threw: cannot read ${REPLY}`);
    },
  },
  {
    name: 'a validator throwing with the answer in its message, then one failing with it',
    run: (telemetry) => {
      server.provider.script.push({ text: envelope(REPLY, 0.9) }, { text: envelope(`${REPLY}!`, 0.9) });
      let calls = 0;
      const validator = (answer: string): [boolean, string] => {
        calls += 1;
        if (calls === 1) throw new Error(`cannot judge ${answer}`);
        return [false, `wrong: ${answer}`];
      };
      return outcome(() => acheck(endpoint(), QUESTION, { maxRetries: 1, validator, telemetry }));
    },
    carries: [REPLY],
    recorded: () => expect(attributesOf('booth.attempt', 'booth.attempt.validation_error')[0]).toContain(REPLY),
  },
  {
    name: 'a comparator throwing with both answers in its message',
    run: (telemetry) => {
      server.provider.fallback = () => ({ text: envelope(`${REPLY}-${Math.random()}`, 0.9) });
      const agree = (a: string, b: string): boolean => {
        throw new Error(`cannot compare ${a} with ${b}`);
      };
      return outcome(() => acheck(endpoint(), QUESTION, { samples: 3, agree, maxRetries: 0, telemetry }));
    },
    carries: [REPLY],
    recorded: () => expect(attributesOf('booth.sample', 'booth.reply')[0]).toContain(REPLY),
  },
  {
    name: 'a callFn throwing with the prompt in its message',
    run: (telemetry) =>
      outcome(() =>
        acheck(
          async (prompt) => {
            throw new Error(`gateway refused: ${prompt}`);
          },
          QUESTION,
          { maxRetries: 0, telemetry },
        ),
      ),
    carries: [PROMPT],
    recorded: () => expect(attributesOf('booth.attempt', 'booth.attempt.error')[0]).toContain(PROMPT),
  },
  {
    name: 'timeouts, a sample replying in time beside one timing out',
    run: (telemetry) => {
      server.provider.script.push({ text: envelope(REPLY, 0.9) }, { text: envelope(REPLY, 0.9), delayMs: 2_000 });
      return outcome(() => acheck(endpoint(), QUESTION, { samples: 2, sampleConcurrency: 2, timeoutMs: 300, maxRetries: 0, telemetry }));
    },
    carries: [REPLY],
    recorded: () => {
      expect(attributesOf('booth.sample', 'booth.error')).toContain('the model call timed out after 300 ms');
      expect(attributesOf('booth.sample', 'booth.reply').join(' ')).toContain(REPLY);
    },
  },
  {
    name: 'an aborted signal whose reason quotes the question',
    run: (telemetry) => {
      const controller = new AbortController();
      server.provider.script.push({ text: envelope(REPLY, 0.9), delayMs: 2_000 });
      setTimeout(() => controller.abort(new Error(`stopped asking ${QUESTION}`)), 50);
      return outcome(() => acheck(endpoint(), QUESTION, { signal: controller.signal, telemetry }));
    },
    carries: [PROMPT],
    recorded: () => expect(checkStatus()).toContain(PROMPT),
  },
  {
    name: 'onAttempt throwing with the reply in its message (check)',
    run: async (telemetry) =>
      outcome(() =>
        check(() => envelope(REPLY, 0.9), QUESTION, {
          telemetry,
          onAttempt: (_index, attempt) => {
            throw new Error(`cannot store ${attempt.rawText}`);
          },
        }),
      ),
    carries: [REPLY],
    recorded: () => expect(checkStatus()).toContain(REPLY),
  },
  {
    name: 'onAttempt quoting a reply that holds a line like a stack frame (check)',
    run: async (telemetry) =>
      outcome(() =>
        check(() => `Sure.\n    at x (y)\nSYSTEM PROMPT WAS: ${REPLY} ${envelope('Paris', 0.9)}`, QUESTION, {
          telemetry,
          onAttempt: (_index, attempt) => {
            throw new Error(`cannot store ${attempt.rawText}`);
          },
        }),
      ),
    carries: [REPLY],
    recorded: () => expect(checkStatus()).toContain(REPLY),
  },
];

describe('telemetry keeps prompts and replies off every span unless asked to record them', () => {
  for (const scenario of scenarios) {
    it(`${scenario.name}: recording off, neither marker on any span`, async () => {
      const got = await scenario.run({ tracer, recordPrompts: false, recordReplies: false });
      const caller = got instanceof Error ? `${got.name}: ${got.message}` : JSON.stringify(got);
      for (const marker of scenario.carries) expect(caller).toContain(marker);
      const spans = exporter.getFinishedSpans();
      expect(spans.some((span) => span.name === 'booth.check')).toBe(true);
      const text = spanText(spans);
      expect(text).not.toContain(PROMPT);
      expect(text).not.toContain(REPLY);
      // Errors that go onto spans never carry the prompt, recording or not.
      if (got instanceof CheckpointError) expect(got.message).not.toContain(PROMPT);
    });

    it(`${scenario.name}: recording on, the markers where they belong`, async () => {
      await scenario.run({ tracer, recordPrompts: true, recordReplies: true });
      scenario.recorded();
    });
  }

  it('the system prompt and the earlier turns are on no span, recordPrompts on or off; custom instructions only with it, inside the prompts', async () => {
    const SYSTEM = 'SYSTEM-MARK-11aa';
    const TURN = 'TURN-MARK-22bb';
    const OWN = 'INSTRUCTIONS-MARK-33cc';
    for (const recordPrompts of [false, true]) {
      exporter.reset();
      server.provider.fallback = () => ({ text: 'no json here' });
      const conversation = { system: SYSTEM, messages: [{ role: 'user' as const, content: TURN }], instructions: OWN, maxRetries: 1 };
      await acheck(endpoint(), QUESTION, { ...conversation, telemetry: { tracer, recordPrompts, recordReplies: true } });
      const text = spanText();
      for (const marker of [SYSTEM, TURN]) expect(text).not.toContain(marker);
      expect(text.includes(OWN)).toBe(recordPrompts);
      // They did reach the model: the run went where the test claims.
      expect(JSON.stringify(server.provider.received.at(-1)?.body)).toContain(SYSTEM);
    }
  });

  it('a checkpoint of a different run names what differs by digest, never the prompts', async () => {
    const store = memoryStore();
    await interrupted(store);
    const error = await outcome(() => acheck(endpoint(), `${QUESTION} (reworded)`, { checkpoint: store, key: 'k', maxRetries: 2 }));
    expect(error).toBeInstanceOf(CheckpointError);
    expect((error as Error).message).toMatch(/belongs to a different run: its prompt \(sha-256 [0-9a-f]{8}…\) is not this call's \(sha-256 [0-9a-f]{8}…\)\.$/);
    expect((error as Error).message).not.toContain(PROMPT);
  });

  it('a provider error keeps the body on `body`, out of its message', async () => {
    server.provider.script.push({ status: 502, body: `<html>${REPLY}</html>` }, { body: `{"choices": [${REPLY}` });
    for (const status of [502, 200]) {
      const error = await outcome(() => endpoint()('q', { attempt: 0 }));
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ status });
      expect((error as ProviderError).message).not.toContain(REPLY);
      expect((error as ProviderError).body).toContain(REPLY);
    }
  });
});

describe('a key in the endpoint URL is shown nowhere', () => {
  const SECRET = 'sk-SECRET-51d0';

  /** Every place a run shows: each attempt's error, the result as JSON, its page, its spans (recording everything). */
  async function shown(result: Awaited<ReturnType<typeof acheck>>): Promise<string[]> {
    return [...result.attempts.map((attempt) => String(attempt.error)), JSON.stringify(result), await toHtml(result), spanText()];
  }

  const everything = { tracer, recordPrompts: true, recordReplies: true };

  it('in the query string: a provider answering 500, and a closed port, fail without showing it', async () => {
    server.provider.script.push({ status: 500, body: { error: { message: 'boom' } } });
    const served = openAICompatible({ baseURL: `${server.provider.url}/v1?api-key=${SECRET}&deployment=x`, model: 'm' });
    const result = await acheck(served, QUESTION, { maxRetries: 0, telemetry: everything });
    // The key still goes to the provider: it is how the endpoint is called.
    expect(server.provider.received[0]?.path).toBe(`/v1/chat/completions?api-key=${SECRET}&deployment=x`);
    expect(result.attempts[0]?.error).toBe(`${server.provider.url}/v1/chat/completions?api-key=***&deployment=*** answered 500 Internal Server Error: boom`);
    for (const place of await shown(result)) expect(place).not.toContain(SECRET);

    exporter.reset();
    const port = await closedPort();
    const closed = openAICompatible({ baseURL: `http://127.0.0.1:${port}/v1?key=${SECRET}`, model: 'm' });
    const refused = await acheck(closed, QUESTION, { maxRetries: 0, telemetry: everything });
    expect(refused.attempts[0]?.error).toMatch(new RegExp(`^POST http://127\\.0\\.0\\.1:${port}/v1/chat/completions\\?key=\\*\\*\\* failed: connect ECONNREFUSED`));
    for (const place of await shown(refused)) expect(place).not.toContain(SECRET);
  });

  it('in the user information: refused when the adapter is made, naming baseURL without the key', () => {
    for (const baseURL of [`${server.provider.url.replace('//', `//user:${SECRET}@`)}/v1`, `${server.provider.url.replace('//', `//${SECRET}@`)}/v1`]) {
      let thrown: unknown;
      try {
        openAICompatible({ baseURL, model: 'm' });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(TypeError);
      expect((thrown as Error).message).toMatch(/^Expected `baseURL` without a user name or password, got "http:\/\/\*\*\*(:\*\*\*)?@127\.0\.0\.1:\d+\/v1": give the key as `apiKey`/);
      expect((thrown as Error).message).not.toContain(SECRET);
    }
    expect(server.provider.received).toHaveLength(0);
  });

  it('an API key or header fetch cannot send is refused when the adapter is made, without quoting it', () => {
    for (const options of [{ apiKey: `${SECRET}\nx` }, { headers: { 'x-api-key': `${SECRET}\u0000` } }, { apiKey: `${SECRET}\u2019` }]) {
      expect(() => openAICompatible({ baseURL: `${server.provider.url}/v1`, model: 'm', ...options })).toThrow(/to be a valid HTTP header/);
      try {
        openAICompatible({ baseURL: `${server.provider.url}/v1`, model: 'm', ...options });
      } catch (error) {
        expect((error as Error).message).not.toContain(SECRET);
      }
    }
  });
});

describe('shownUrl: the one redaction of every URL Booth shows (endpoints, Redis)', () => {
  it.each([
    ['http://user:sk-1@host/v1', 'http://***:***@host/v1'],
    ['http://sk-1@host/v1', 'http://***@host/v1'],
    ['redis://:s3cret@127.0.0.1:6379/0', 'redis://:***@127.0.0.1:6379/0'],
    ['rediss://default:p%40ss@h:1', 'rediss://***:***@h:1'],
    ['https://host/v1?api-key=sk-1&deployment=x', 'https://host/v1?api-key=***&deployment=***'],
    ['https://host/v1?sk-1', 'https://host/v1?***'],
    ['https://host/v1#token=sk-1', 'https://host/v1#***'],
    ['https://host/a@b/v1', 'https://host/a@b/v1'],
    ['http://127.0.0.1:11434/v1', 'http://127.0.0.1:11434/v1'],
    // Does not parse (a `/` in the password): everything to the last `@` is hidden.
    ['http://u:pa/ss@host/v1', 'http://***:***@host/v1'],
    ['not a url?key=sk-1', 'not a url?key=***'],
    // No scheme: still a user name and password before the last `@`.
    ['user:sk-1@localhost:8080/v1', '***:***@localhost:8080/v1'],
    ['sk-1@host:8080/v1', '***@host:8080/v1'],
    ['u:pa/ss@host/v1?k=sk-2', '***:***@host/v1?k=***'],
    ['localhost:8080/v1', 'localhost:8080/v1'],
  ])('%s → %s', (given, shown) => {
    expect(shownUrl(given)).toBe(shown);
  });

  it('redactUrls hides the URLs inside a message and leaves the rest', () => {
    expect(redactUrls('POST http://a:sk-1@h/x?k=sk-2 failed; see https://docs/ too')).toBe('POST http://***:***@h/x?k=*** failed; see https://docs/ too');
  });
});
