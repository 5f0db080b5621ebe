/**
 * One line from the model clients people already use to a Booth `callFn`. No SDK is a
 * dependency: each adapter is typed by the shape it uses, so you bring your own version.
 * Each reports, through `info.reportUsage`, the tokens its provider says the call consumed.
 */
import type { AsyncCallFn, CallInfo } from './options.js';
import { type JsonSchema, replySchemaOf } from './schema.js';
import { redactUrls, shownUrl } from './urls.js';
import { describeValue } from './values.js';

/**
 * How an adapter asks for the reply: `'text'` (the default) leaves it to the prompt;
 * `'json_object'` asks the provider for any JSON object; `'json_schema'` sends the
 * envelope's JSON Schema (`info.replySchema`, with a typed answer's schema inside), so a
 * provider that supports structured output constrains the reply to it. Booth checks the
 * reply the same way whichever is chosen.
 */
export type ResponseFormat = 'text' | 'json_object' | 'json_schema';

const RESPONSE_FORMATS: readonly ResponseFormat[] = ['text', 'json_object', 'json_schema'];
/** The name providers show for the structured output Booth asks for. */
const REPLY_NAME = 'booth_reply';
/** A run that gave no schema of its reply asks for the plain envelope. */
const TEXT_REPLY = replySchemaOf(null);

function readResponseFormat(value: unknown, allowed: readonly ResponseFormat[] = RESPONSE_FORMATS): ResponseFormat {
  if (value === undefined) return 'text';
  if (!allowed.includes(value as ResponseFormat)) {
    const names = allowed.map((format) => `'${format}'`);
    throw new TypeError(`Expected \`responseFormat\` to be ${names.slice(0, -1).join(', ')} or ${names.at(-1)}, got ${describeValue(value)}.`);
  }
  return value as ResponseFormat;
}

function readSystem(value: unknown): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  throw new TypeError(`Expected \`system\` to be a string (a system message), got ${describeValue(value)}.`);
}

/** The Chat Completions messages: the optional system message, then the prompt. */
function chatMessages(system: string | undefined, prompt: string): Array<{ role: 'system' | 'user'; content: string }> {
  return system === undefined ? [{ role: 'user', content: prompt }] : [{ role: 'system', content: system }, { role: 'user', content: prompt }];
}

/** Chat Completions' `response_format` for a format, or nothing for plain text. */
function chatResponseFormat(format: ResponseFormat, info: CallInfo): Record<string, unknown> {
  if (format === 'json_object') return { response_format: { type: 'json_object' } };
  if (format === 'json_schema') {
    return { response_format: { type: 'json_schema', json_schema: { name: REPLY_NAME, schema: info.replySchema ?? TEXT_REPLY } } };
  }
  return {};
}

/** A token count as a provider gives it, if it is one. */
function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Reports the tokens a provider's reply says the call consumed. Counts that are missing or
 * not counts report nothing: Booth's `usage: null` says "unknown", where zeros would
 * understate the cost, and a reply the provider miscounted is still a reply.
 */
function reportTokens(info: CallInfo, input: unknown, output: unknown, total: unknown = null): void {
  if (isCount(input) && isCount(output)) {
    info.reportUsage?.({ inputTokens: input, outputTokens: output, totalTokens: isCount(total) ? total : null });
  }
}

/** Chat Completions' `usage`. Its `prompt_tokens` already include cached ones, its `completion_tokens` reasoning ones. */
function reportChatUsage(info: CallInfo, usage: unknown): void {
  const { prompt_tokens, completion_tokens, total_tokens } = (usage ?? {}) as Record<string, unknown>;
  reportTokens(info, prompt_tokens, completion_tokens, total_tokens);
}

/** Most of a provider's body an error keeps, in UTF-16 code units. */
const BODY_LIMIT = 4096;
/** Most of a provider's own explanation (`error.message`) a message quotes. */
const EXPLANATION_LIMIT = 300;

/**
 * An HTTP error from a model provider, or a reply Booth could not read: what `callRetries`
 * needs to decide and to wait.
 */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  /** The HTTP status; 200 for a successful response whose body is not a chat completion. */
  readonly status: number;
  /** How long the provider asked us to wait (`retry-after-ms` or `retry-after`); null when it did not say. */
  readonly retryAfterMs: number | null;
  /**
   * The response body as the provider sent it (its first 4 096 characters), for debugging;
   * null when the error did not come with one. Never part of `message`: a body can hold the
   * model's reply, or echo the prompt, and the message goes into results, logs and spans.
   */
  readonly body: string | null;

  constructor(status: number, message: string, retryAfterMs: number | null, options?: { cause?: unknown; body?: string | null }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.retryAfterMs = retryAfterMs;
    this.body = options?.body === undefined || options.body === null ? null : options.body.slice(0, BODY_LIMIT);
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
  /** A system message sent before the prompt. */
  readonly system?: string | undefined;
  /** `'json_schema'` asks for structured output in the envelope's schema; see `ResponseFormat`. Default `'text'`. */
  readonly responseFormat?: ResponseFormat | undefined;
  /** Merged into the request body last: `{ max_tokens: 256 }`. */
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
  const system = readSystem(options?.system);
  const responseFormat = readResponseFormat(options?.responseFormat);
  if (typeof baseURL !== 'string' || !URL.canParse(baseURL)) {
    const got = typeof baseURL === 'string' ? describeValue(shownUrl(baseURL)) : describeValue(baseURL);
    throw new TypeError(`Expected \`baseURL\` to be a URL such as "http://localhost:11434/v1", got ${got}.`);
  }
  const parsed = new URL(baseURL);
  if (parsed.username !== '' || parsed.password !== '') {
    // fetch() refuses such a URL, and would quote it whole in its error, key included.
    throw new TypeError(
      `Expected \`baseURL\` without a user name or password, got ${JSON.stringify(shownUrl(baseURL))}: give the key as \`apiKey\` (sent as Authorization: Bearer …) or in \`headers\`.`,
    );
  }
  if (typeof model !== 'string' || model === '') {
    throw new TypeError(`Expected \`model\` to be a model name such as "gpt-4o-mini", got ${describeValue(model)}.`);
  }
  const requestHeaders = readHeaders(apiKey, headers);
  // The path goes before any query (`?api-version=…` for Azure, a key for some gateways), not after it.
  parsed.pathname = `${parsed.pathname.replace(/\/+$/, '')}/chat/completions`;
  const url = parsed.href;
  /** The URL as every message shows it: a key in its query stays out of results, logs and spans. */
  const shown = shownUrl(url);
  return async (prompt: string, info: CallInfo) => {
    const response = await reach(url, shown, {
      method: 'POST',
      headers: requestHeaders,
      body: JSON.stringify({
        model,
        messages: chatMessages(system, prompt),
        ...(temperature === undefined ? {} : { temperature }),
        ...chatResponseFormat(responseFormat, info),
        ...extraBody,
      }),
      ...(info.signal ? { signal: info.signal } : {}),
    }, info.signal);
    const text = await response.text();
    if (!response.ok) {
      const explanation = providerExplanation(text);
      throw new ProviderError(
        response.status,
        `${shown} answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${explanation === null ? '' : `: ${explanation}`}`,
        retryAfter(response.headers),
        { body: text },
      );
    }
    const completion = completionOf(text, shown);
    reportChatUsage(info, completion.usage);
    return contentOf(completion, text, shown);
  };
}

/**
 * The request's headers, checked once: a value fetch() cannot send would fail every call
 * with an error quoting it, and the value may be the key. The message names the header, never its value.
 */
function readHeaders(apiKey: unknown, headers: unknown): Record<string, string> {
  if (apiKey !== undefined && typeof apiKey !== 'string') {
    throw new TypeError(`Expected \`apiKey\` to be a string, got ${describeValue(apiKey)}.`);
  }
  if (headers !== undefined && (typeof headers !== 'object' || headers === null || Array.isArray(headers))) {
    throw new TypeError(`Expected \`headers\` to be an object of header names and values, got ${describeValue(headers)}.`);
  }
  const all: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey) {
    sendable('`apiKey`', 'authorization', `Bearer ${apiKey}`);
    all['authorization'] = `Bearer ${apiKey}`;
  }
  for (const [name, value] of Object.entries((headers ?? {}) as Record<string, unknown>)) {
    const what = `\`headers[${JSON.stringify(name)}]\``;
    if (typeof value !== 'string') throw new TypeError(`Expected ${what} to be a string, got ${describeValue(value)}.`);
    sendable(what, name, value);
    all[name] = value;
  }
  return all;
}

function sendable(what: string, name: string, value: string): void {
  try {
    new Headers([[name, value]]);
  } catch {
    throw new TypeError(
      `Expected ${what} to be a valid HTTP header: a token for its name, and for its value no line breaks or control characters and only Latin-1 characters (the value is not shown: it may be a key).`,
    );
  }
}

/**
 * `fetch`, with its network failures made readable: undici's bare "fetch failed" becomes
 * `POST <url> failed: connect ECONNREFUSED 127.0.0.1:1`, the cause kept as `cause`. An
 * abort is passed on unchanged, so Booth still tells a timeout from an outage.
 */
async function reach(url: string, shown: string, init: RequestInit, signal: AbortSignal | undefined): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if (signal?.aborted || (error as { name?: unknown } | null)?.name === 'AbortError') throw error;
    const cause = (error as { cause?: unknown } | null)?.cause;
    if (cause === undefined) throw error;
    throw new TypeError(`POST ${shown} failed: ${redactUrls(causeText(cause))}`, { cause: error });
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

/**
 * The provider's own explanation of an HTTP error, from `{ "error": { "message" } }`,
 * `{ "error": "…" }` or `{ "message": "…" }`, cut to 300 characters; null when the body has
 * none. The rest of the body stays out of the message (it is the error's `body`): a server
 * may echo the request, prompt included, in an error page or a validation error.
 */
function providerExplanation(body: string): string | null {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown } | null;
    const error = parsed?.error;
    const message = typeof error === 'string' ? error : (error?.message ?? parsed?.message);
    if (typeof message === 'string' && message.trim() !== '') return cut(message.trim(), EXPLANATION_LIMIT);
  } catch {
    // Not JSON: no explanation the message could quote without quoting the body.
  }
  return null;
}

/** The first `limit` code units of `text`, a surrogate pair never split, `…` when cut. */
function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const end = /[\uD800-\uDBFF]/.test(text[limit - 1]!) ? limit - 1 : limit;
  return `${text.slice(0, end)}…`;
}

/** A chat completion as the server sent it: any JSON at all, so each part is checked where it is read. */
interface ChatCompletionBody {
  readonly choices?: ReadonlyArray<{ readonly message?: { readonly content?: unknown } | null } | null>;
  readonly usage?: unknown;
}

/*
 * A successful response that is not a chat completion fails the call. Its body may be the
 * model's reply in another shape, so the message says what is wrong with it, never what it
 * says: the body is the error's `body`.
 */
function completionOf(body: string, shown: string): ChatCompletionBody {
  if (body.trim() === '') throw new ProviderError(200, `${shown} answered with an empty body; expected a chat completion.`, null, { body });
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new ProviderError(200, `${shown} answered with a malformed body (not JSON, ${body.length} characters; see the error's body).`, null, { body });
  }
  return (parsed ?? {}) as ChatCompletionBody;
}

function contentOf(completion: ChatCompletionBody, body: string, shown: string): string {
  const content = completion.choices?.[0]?.message?.content;
  if (typeof content !== 'string') {
    throw new ProviderError(200, `${shown} answered without choices[0].message.content: ${missingContent(completion)}.`, null, { body });
  }
  return content;
}

/** Where a completion without text content stops, by the kind of each value, never the value. */
function missingContent(completion: ChatCompletionBody): string {
  if (kindOf(completion) !== 'an object') return `the body is ${kindOf(completion)}, not an object`;
  const { choices } = completion;
  if (!Array.isArray(choices)) return choices === undefined ? 'it has no choices' : `its choices are ${kindOf(choices)}, not an array`;
  if (choices.length === 0) return 'its choices are empty';
  const choice = choices[0] as { message?: unknown } | null | undefined;
  const message = kindOf(choice) === 'an object' ? choice!.message : undefined;
  if (kindOf(message) !== 'an object') return `choices[0].message is ${kindOf(message)}`;
  const { content, refusal } = message as Record<string, unknown>;
  const refused = typeof refusal === 'string' ? ', and the model refused (choices[0].message.refusal)' : '';
  return `its content is ${kindOf(content)}${refused}`;
}

/** What a JSON value is, without a word of what it says. */
function kindOf(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
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
        body: { model: string; messages: Array<{ role: 'system' | 'user'; content: string }> } & Record<string, unknown>,
        options?: { signal?: AbortSignal | undefined },
      ): PromiseLike<{
        choices: ReadonlyArray<{ message?: { content?: string | null } | null }>;
        usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | null | undefined;
      }>;
    };
  };
}

/** What the adapters take besides the provider's own parameters. */
export interface AdapterOptions {
  /** A system message sent before the prompt. */
  readonly system?: string | undefined;
  /** How to ask for the reply; see `ResponseFormat`. Default `'text'`. */
  readonly responseFormat?: ResponseFormat | undefined;
}

/**
 * A `callFn` over an official `openai` client (any version with `chat.completions.create`).
 * Its HTTP errors become `ProviderError`s carrying `status` and `retryAfterMs`. Every other
 * parameter goes into the request as it is.
 *
 * @example
 * const callFn = fromOpenAI(new OpenAI(), { model: 'gpt-4o-mini', temperature: 0, responseFormat: 'json_schema' });
 */
export function fromOpenAI(client: OpenAIClientLike, params: { model: string } & AdapterOptions & Record<string, unknown>): AsyncCallFn {
  const { system: givenSystem, responseFormat: givenFormat, ...request } = params;
  const system = readSystem(givenSystem);
  const responseFormat = readResponseFormat(givenFormat);
  return async (prompt, info) => {
    const body = { ...request, messages: chatMessages(system, prompt), ...chatResponseFormat(responseFormat, info) };
    const completion = await providerCall(() => client.chat.completions.create(body, { signal: info.signal }));
    reportChatUsage(info, completion.usage);
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
    ): PromiseLike<{
      content: ReadonlyArray<{ type: string; text?: string; input?: unknown }>;
      usage?: {
        input_tokens?: number;
        output_tokens?: number;
        cache_creation_input_tokens?: number | null;
        cache_read_input_tokens?: number | null;
      } | null | undefined;
    }>;
  };
}

/**
 * A `callFn` over an official `@anthropic-ai/sdk` client. `max_tokens` defaults to 1024.
 * Messages have no `response_format`: with `responseFormat: 'json_schema'` the request
 * offers one tool whose input schema is the envelope and forces its use, and the tool's
 * input, as JSON text, is the reply.
 *
 * @example
 * const callFn = fromAnthropic(new Anthropic(), { model: 'claude-sonnet-4-5', responseFormat: 'json_schema' });
 */
export function fromAnthropic(
  client: AnthropicClientLike,
  params: { model: string; max_tokens?: number; system?: unknown; responseFormat?: 'text' | 'json_schema' | undefined } & Record<string, unknown>,
): AsyncCallFn {
  // Anthropic's own `system` (a string, or text blocks with cache_control) goes through as given.
  const { responseFormat: givenFormat, ...request } = params;
  const forcedTool = readResponseFormat(givenFormat, ['text', 'json_schema']) === 'json_schema';
  if (forcedTool && (request['tools'] !== undefined || request['tool_choice'] !== undefined)) {
    throw new TypeError(
      "`responseFormat: 'json_schema'` asks Anthropic for the reply through one forced tool of Booth's, so `tools` and `tool_choice` cannot be given too; leave them out, or use responseFormat 'text'.",
    );
  }
  return async (prompt, info) => {
    const body = {
      max_tokens: 1024,
      ...request,
      ...(forcedTool
        ? {
            tools: [{ name: REPLY_NAME, description: 'Give your reply as this tool\'s input.', input_schema: info.replySchema ?? TEXT_REPLY }],
            tool_choice: { type: 'tool', name: REPLY_NAME },
          }
        : {}),
      messages: [{ role: 'user' as const, content: prompt }],
    };
    const message = await providerCall(() => client.messages.create(body, { signal: info.signal }));
    reportAnthropicUsage(info, message.usage);
    if (forcedTool) {
      const call = message.content.find((block) => block.type === 'tool_use');
      if (call === undefined) throw new Error(`The Anthropic client returned no ${REPLY_NAME} tool call, though the request forced one.`);
      return JSON.stringify(call.input);
    }
    return message.content
      .filter((block) => block.type === 'text' && typeof block.text === 'string')
      .map((block) => block.text)
      .join('');
  };
}

/**
 * Messages' `usage`. Its `input_tokens` are only the tokens after the prompt's last cache
 * breakpoint; the cache's writes and reads are the rest of the prompt, and billed too, so
 * they count as input. Otherwise a cached prompt would look almost free, and its count
 * would not compare with OpenAI's, whose `prompt_tokens` include cached tokens.
 */
function reportAnthropicUsage(info: CallInfo, usage: unknown): void {
  const { input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens } = (usage ?? {}) as Record<string, unknown>;
  // Null or absent when no cache was involved; any other value that is not a count leaves the input unknown.
  const written = cache_creation_input_tokens ?? 0;
  const read = cache_read_input_tokens ?? 0;
  if (isCount(input_tokens) && isCount(written) && isCount(read)) reportTokens(info, input_tokens + written + read, output_tokens);
}

/**
 * The Vercel AI SDK's token counts: `inputTokens` and `outputTokens` from version 5 on,
 * `promptTokens` and `completionTokens` before; `totalTokens` in both.
 */
export interface AISDKUsageLike {
  readonly inputTokens?: number | undefined;
  readonly outputTokens?: number | undefined;
  readonly promptTokens?: number | undefined;
  readonly completionTokens?: number | undefined;
  readonly totalTokens?: number | undefined;
}

/** The Vercel AI SDK's `generateText`, as much of it as Booth uses. */
export type GenerateTextLike<TModel> = (options: {
  model: TModel;
  prompt: string;
  system?: string | undefined;
  abortSignal?: AbortSignal | undefined;
}) => PromiseLike<{ text: string; usage?: AISDKUsageLike | undefined }>;

/** The Vercel AI SDK's `generateObject`, as much of it as Booth uses. */
export type GenerateObjectLike<TModel, TSchema> = (options: {
  model: TModel;
  prompt: string;
  system?: string | undefined;
  abortSignal?: AbortSignal | undefined;
  output?: 'no-schema' | undefined;
  schema?: TSchema | undefined;
  schemaName?: string | undefined;
}) => PromiseLike<{ object: unknown; usage?: AISDKUsageLike | undefined }>;

/** Options of `fromAISDK`: `generateObject` and `jsonSchema` (both from `ai`) are needed for JSON output only. */
export interface AISDKOptions<TModel, TSchema> extends AdapterOptions {
  readonly generateText: GenerateTextLike<TModel>;
  readonly model: TModel;
  readonly generateObject?: GenerateObjectLike<TModel, TSchema> | undefined;
  /** The SDK's `jsonSchema()`, which wraps a plain JSON Schema for `generateObject`. */
  readonly jsonSchema?: ((schema: JsonSchema) => TSchema) | undefined;
}

/**
 * A `callFn` over the Vercel AI SDK. With `responseFormat` `'json_object'` or
 * `'json_schema'` it calls the SDK's object output, `generateObject` (without a schema, or
 * with the envelope's), and the object, as JSON text, is the reply.
 *
 * @example
 * import { generateObject, generateText, jsonSchema } from 'ai';
 * const callFn = fromAISDK({ generateText, generateObject, jsonSchema, model: openai('gpt-4o-mini'), responseFormat: 'json_schema' });
 */
export function fromAISDK<TModel, TSchema = unknown>(options: AISDKOptions<TModel, TSchema>): AsyncCallFn {
  const { generateText, generateObject, jsonSchema, model } = options;
  const system = readSystem(options.system);
  const responseFormat = readResponseFormat(options.responseFormat);
  if (responseFormat !== 'text' && typeof generateObject !== 'function') {
    throw new TypeError(`\`responseFormat: '${responseFormat}'\` needs the SDK's object output: pass \`generateObject\` (from 'ai') too.`);
  }
  if (responseFormat === 'json_schema' && typeof jsonSchema !== 'function') {
    throw new TypeError("`responseFormat: 'json_schema'` needs the SDK's `jsonSchema` helper (from 'ai') to wrap the envelope's schema: pass `jsonSchema` too.");
  }
  const shared = (prompt: string, info: CallInfo) => ({ model, prompt, ...(system === undefined ? {} : { system }), abortSignal: info.signal });
  if (responseFormat === 'text') {
    return async (prompt, info) => {
      const { text, usage } = await generateText(shared(prompt, info));
      reportAISDKUsage(info, usage);
      return text;
    };
  }
  return async (prompt, info) => {
    const request =
      responseFormat === 'json_schema'
        ? { ...shared(prompt, info), schema: jsonSchema!(info.replySchema ?? TEXT_REPLY), schemaName: REPLY_NAME }
        : { ...shared(prompt, info), output: 'no-schema' as const };
    let generated: { object: unknown; usage?: AISDKUsageLike | undefined };
    try {
      generated = await generateObject!(request);
    } catch (error) {
      // The SDK's NoObjectGeneratedError carries the usage of the reply it could not read as
      // an object: the call failed, but the provider still counted its tokens.
      reportAISDKUsage(info, (error as { usage?: unknown } | null)?.usage);
      throw error;
    }
    reportAISDKUsage(info, generated.usage);
    return JSON.stringify(generated.object);
  };
}

/** The SDK's counts as it gives them, whichever version's names they have. */
function reportAISDKUsage(info: CallInfo, usage: unknown): void {
  const { inputTokens, outputTokens, promptTokens, completionTokens, totalTokens } = (usage ?? {}) as Record<string, unknown>;
  // Version 4 counts NaN when the provider said nothing; not being a count, it reports nothing.
  reportTokens(info, inputTokens ?? promptTokens, outputTokens ?? completionTokens, totalTokens);
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
    // An SDK's message may name the endpoint, key and all in a query or user name.
    const message = (error as { message?: unknown }).message;
    throw new ProviderError(status, typeof message === 'string' ? redactUrls(message) : '', retryAfterMs, { cause: error });
  }
}
