/**
 * One line from the model clients people already use to a Booth `callFn`. No SDK is a
 * dependency: each adapter is typed by the shape it uses, so you bring your own version.
 */
import type { AsyncCallFn, CallInfo } from './options.js';
import { describeValue } from './values.js';

/** An HTTP error from a model provider: what `callRetries` needs to decide and to wait. */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  /** The HTTP status. */
  readonly status: number;
  /** How long the provider asked us to wait (`retry-after-ms` or `retry-after`); null when it did not say. */
  readonly retryAfterMs: number | null;

  constructor(status: number, message: string, retryAfterMs: number | null, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}

export interface OpenAICompatibleOptions {
  /** The API root, e.g. `https://api.openai.com/v1`, `http://localhost:11434/v1` (Ollama), `http://localhost:8000/v1` (vLLM). */
  readonly baseURL: string;
  readonly model: string;
  /** Sent as `Authorization: Bearer …` when given. */
  readonly apiKey?: string | undefined;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly temperature?: number | undefined;
  /** Merged into the request body: `{ max_tokens: 256, response_format: { type: 'json_object' } }`. */
  readonly extraBody?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * A `callFn` over the Chat Completions HTTP API, with Node's global `fetch`: works with
 * OpenAI, Groq, Together, vLLM, llama.cpp's server, LM Studio and Ollama's `/v1`.
 *
 * @example
 * const callFn = openAICompatible({ baseURL: 'http://localhost:11434/v1', model: 'llama3.1' });
 * const result = await acheck(callFn, question, { timeoutMs: 60_000, callRetries: { retries: 3 } });
 */
export function openAICompatible(options: OpenAICompatibleOptions): AsyncCallFn {
  const { baseURL, model, apiKey, headers, temperature, extraBody } = options ?? ({} as OpenAICompatibleOptions);
  if (typeof baseURL !== 'string' || !URL.canParse(baseURL)) {
    throw new TypeError(`Expected \`baseURL\` to be a URL such as "http://localhost:11434/v1", got ${describeValue(baseURL)}.`);
  }
  if (typeof model !== 'string' || model === '') {
    throw new TypeError(`Expected \`model\` to be a model name such as "gpt-4o-mini", got ${describeValue(model)}.`);
  }
  const url = `${baseURL.replace(/\/+$/, '')}/chat/completions`;
  return async (prompt: string, info: CallInfo) => {
    const response = await reach(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        ...headers,
      },
      body: JSON.stringify({
        model,
        messages: [{ role: 'user', content: prompt }],
        ...(temperature === undefined ? {} : { temperature }),
        ...extraBody,
      }),
      ...(info.signal ? { signal: info.signal } : {}),
    }, info.signal);
    const text = await response.text();
    if (!response.ok) {
      throw new ProviderError(
        response.status,
        `${url} answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}: ${providerMessage(text)}`,
        retryAfter(response.headers),
      );
    }
    return contentOf(text, url);
  };
}

/**
 * `fetch`, with its network failures made readable: undici's bare "fetch failed" becomes
 * `POST <url> failed: connect ECONNREFUSED 127.0.0.1:1`, the cause kept as `cause`. An
 * abort is passed on unchanged, so Booth still tells a timeout from an outage.
 */
async function reach(url: string, init: RequestInit, signal: AbortSignal | undefined): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if (signal?.aborted || (error as { name?: unknown } | null)?.name === 'AbortError') throw error;
    const cause = (error as { cause?: unknown } | null)?.cause;
    if (cause === undefined) throw error;
    throw new TypeError(`POST ${url} failed: ${causeText(cause)}`, { cause: error });
  }
}

/** `connect ECONNREFUSED 127.0.0.1:1`; for several addresses tried (an AggregateError), each of them. */
function causeText(cause: unknown): string {
  const inner = (cause as { errors?: unknown } | null)?.errors;
  if (Array.isArray(inner) && inner.length > 0) return [...new Set(inner.map(causeText))].join('; ');
  const message = (cause as { message?: unknown } | null)?.message;
  const code = (cause as { code?: unknown } | null)?.code;
  const text = typeof message === 'string' && message !== '' ? message : String(cause);
  return typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text;
}

/** The provider's own explanation, from `{ "error": { "message" } }` or the raw body. */
function providerMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const error = parsed.error;
    const message = typeof error === 'string' ? error : (error?.message ?? parsed.message);
    if (typeof message === 'string') return message;
  } catch {
    // Not JSON: the body itself is the best explanation there is.
  }
  return body.trim().slice(0, 300) || '(empty body)';
}

function contentOf(body: string, url: string): string {
  if (body.trim() === '') throw new Error(`${url} answered with an empty body; expected a chat completion.`);
  let parsed: { choices?: Array<{ message?: { content?: unknown } }> };
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new Error(`${url} answered with a malformed body (not JSON): ${body.slice(0, 120)}`);
  }
  const content = parsed?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') {
    throw new Error(`${url} answered without choices[0].message.content; got ${body.slice(0, 120)}`);
  }
  return content;
}

/** `retry-after-ms` (milliseconds), else `retry-after` (seconds, or an HTTP date). */
export function retryAfter(headers: { get(name: string): string | null }): number | null {
  const ms = Number(headers.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/** The part of the official `openai` client that Booth uses. */
export interface OpenAIClientLike {
  readonly chat: {
    readonly completions: {
      create(
        body: { model: string; messages: Array<{ role: 'user'; content: string }> } & Record<string, unknown>,
        options?: { signal?: AbortSignal | undefined },
      ): PromiseLike<{ choices: ReadonlyArray<{ message?: { content?: string | null } | null }> }>;
    };
  };
}

/**
 * A `callFn` over an official `openai` client (any version with `chat.completions.create`).
 * Its HTTP errors become `ProviderError`s carrying `status` and `retryAfterMs`.
 *
 * @example
 * const callFn = fromOpenAI(new OpenAI(), { model: 'gpt-4o-mini', temperature: 0 });
 */
export function fromOpenAI(client: OpenAIClientLike, params: { model: string } & Record<string, unknown>): AsyncCallFn {
  return async (prompt, info) => {
    const completion = await providerCall(() =>
      client.chat.completions.create({ ...params, messages: [{ role: 'user', content: prompt }] }, { signal: info.signal }),
    );
    const content = completion.choices[0]?.message?.content;
    if (typeof content !== 'string') throw new Error('The OpenAI client returned no message content.');
    return content;
  };
}

/** The part of the official `@anthropic-ai/sdk` client that Booth uses. */
export interface AnthropicClientLike {
  readonly messages: {
    create(
      body: { model: string; max_tokens: number; messages: Array<{ role: 'user'; content: string }> } & Record<string, unknown>,
      options?: { signal?: AbortSignal | undefined },
    ): PromiseLike<{ content: ReadonlyArray<{ type: string; text?: string }> }>;
  };
}

/**
 * A `callFn` over an official `@anthropic-ai/sdk` client. `max_tokens` defaults to 1024.
 *
 * @example
 * const callFn = fromAnthropic(new Anthropic(), { model: 'claude-sonnet-4-5' });
 */
export function fromAnthropic(
  client: AnthropicClientLike,
  params: { model: string; max_tokens?: number } & Record<string, unknown>,
): AsyncCallFn {
  return async (prompt, info) => {
    const message = await providerCall(() =>
      client.messages.create(
        { max_tokens: 1024, ...params, messages: [{ role: 'user', content: prompt }] },
        { signal: info.signal },
      ),
    );
    return message.content
      .filter((block) => block.type === 'text' && typeof block.text === 'string')
      .map((block) => block.text)
      .join('');
  };
}

/** The Vercel AI SDK's `generateText`, as much of it as Booth uses. */
export type GenerateTextLike<TModel> = (options: {
  model: TModel;
  prompt: string;
  abortSignal?: AbortSignal | undefined;
}) => PromiseLike<{ text: string }>;

/**
 * A `callFn` over the Vercel AI SDK.
 *
 * @example
 * import { generateText } from 'ai';
 * const callFn = fromAISDK({ generateText, model: openai('gpt-4o-mini') });
 */
export function fromAISDK<TModel>({ generateText, model }: { generateText: GenerateTextLike<TModel>; model: TModel }): AsyncCallFn {
  return async (prompt, info) => (await generateText({ model, prompt, abortSignal: info.signal })).text;
}

/** SDK errors with an HTTP status become `ProviderError`s, so `callRetries` can read status and Retry-After. */
async function providerCall<T>(call: () => PromiseLike<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const status = (error as { status?: unknown } | null)?.status;
    if (typeof status !== 'number') throw error;
    const headers = (error as { headers?: unknown }).headers;
    const retryAfterMs =
      headers && typeof (headers as { get?: unknown }).get === 'function'
        ? retryAfter(headers as { get(name: string): string | null })
        : headers && typeof headers === 'object'
          ? retryAfter({ get: (name) => ((headers as Record<string, unknown>)[name] as string | undefined) ?? null })
          : null;
    throw new ProviderError(status, (error as Error).message, retryAfterMs, { cause: error });
  }
}
