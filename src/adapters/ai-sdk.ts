import type { AsyncCallFn, CallInfo } from '../decide/model-call.js';
import type { JsonSchema } from '../decide/schema.js';
import { readShape } from '../options/read-options.js';
import { redactUrls } from '../util/urls.js';
import { describeValue } from '../util/values.js';
import { ProviderError, retryAfter } from './http.js';
import { type AdapterOptions, readResponseFormat, readSampleSettings, readSystem, REPLY_NAME, reportTokens, sampling, systemAndTurns, TEXT_REPLY } from './request.js';
import { eventTextStream, linkedAbort, readStream, streamFailure } from './stream.js';

/** `fromAISDK()`: the Vercel AI SDK's `generateText`, `generateObject` or `streamText`, with any of its providers. */

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

/** What Booth sends either function of the Vercel AI SDK: the chat, and how to sample it. */
export interface AISDKCallLike<TModel> {
  model: TModel;
  system?: string | undefined;
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
  temperature?: number | undefined;
  seed?: number | undefined;
  abortSignal?: AbortSignal | undefined;
}

/** The Vercel AI SDK's `generateText`, as much of it as Booth uses. */
export type GenerateTextLike<TModel> = (options: AISDKCallLike<TModel>) => PromiseLike<{ text: string; usage?: AISDKUsageLike | undefined }>;

/** The Vercel AI SDK's `generateObject`, as much of it as Booth uses. */
export type GenerateObjectLike<TModel, TSchema> = (options: AISDKCallLike<TModel> & {
  output?: 'no-schema' | undefined;
  schema?: TSchema | undefined;
  schemaName?: string | undefined;
}) => PromiseLike<{ object: unknown; usage?: AISDKUsageLike | undefined }>;

/** A part of the AI SDK's `fullStream`, as much of it as Booth reads: text deltas, errors, the finish with its usage. */
export interface AISDKStreamPartLike {
  readonly type: string;
}

/** What the Vercel AI SDK's `streamText` returns, as much of it as Booth uses. */
export interface AISDKStreamLike {
  readonly textStream: AsyncIterable<string>;
  /** Every part of the stream, errors included (version 4 on); without it, `textStream` is read. */
  readonly fullStream?: AsyncIterable<AISDKStreamPartLike> | undefined;
  /** The usage of every step (version 5 on). */
  readonly totalUsage?: PromiseLike<AISDKUsageLike | undefined> | undefined;
  readonly usage?: PromiseLike<AISDKUsageLike | undefined> | undefined;
}

/** The Vercel AI SDK's `streamText`, as much of it as Booth uses (it returns at once; version 3 returned a Promise). */
export type StreamTextLike<TModel> = (options: AISDKCallLike<TModel> & { onError?: ((event: { error: unknown }) => void) | undefined }) => AISDKStreamLike | PromiseLike<AISDKStreamLike>;

/**
 * Options of `fromAISDK`: `generateObject` and `jsonSchema` (both from `ai`) are needed for
 * JSON output only, `streamText` for `stream: true` only (and then `generateText` is not).
 */
export interface AISDKOptions<TModel, TSchema> extends AdapterOptions {
  readonly generateText?: GenerateTextLike<TModel> | undefined;
  readonly model: TModel;
  readonly generateObject?: GenerateObjectLike<TModel, TSchema> | undefined;
  /** The SDK's `jsonSchema()`, which wraps a plain JSON Schema for `generateObject`. */
  readonly jsonSchema?: ((schema: JsonSchema) => TSchema) | undefined;
  /** The temperature of every call but a sample's. */
  readonly temperature?: number | undefined;
  /** The SDK's `seed`; a sample's call is sent `seed + sample` (from 0 without one). */
  readonly seed?: number | undefined;
  /** The SDK's `streamText`, which `stream: true` calls. */
  readonly streamText?: StreamTextLike<TModel> | undefined;
  /**
   * Stream the reply through `streamText`: the call returns its text chunks as they arrive,
   * for `acheck()`, and reports the stream's total usage when it ends. Text replies only
   * (`responseFormat: 'text'`). Default false.
   */
  readonly stream?: boolean | undefined;
}

const OPTION_KEYS = ['generateText', 'model', 'generateObject', 'jsonSchema', 'system', 'responseFormat', 'temperature', 'sampleTemperature', 'seed', 'streamText', 'stream'] as const;

/**
 * A `callFn` over the Vercel AI SDK. With `responseFormat` `'json_object'` or
 * `'json_schema'` it calls the SDK's object output, `generateObject` (without a schema, or
 * with the envelope's), and the object, as JSON text, is the reply. With `stream: true` it
 * calls `streamText` and returns the reply's text chunks as they arrive, for `acheck()`.
 *
 * @example
 * import { generateObject, generateText, jsonSchema } from 'ai';
 * const callFn = fromAISDK({ generateText, generateObject, jsonSchema, model: openai('gpt-4o-mini'), responseFormat: 'json_schema' });
 * @example
 * import { streamText } from 'ai';
 * const callFn = fromAISDK({ streamText, model: openai('gpt-4o-mini'), stream: true });
 */
export function fromAISDK<TModel, TSchema = unknown>(options: AISDKOptions<TModel, TSchema>): AsyncCallFn {
  const given = readShape(options, OPTION_KEYS, '`fromAISDK()` options', 'fromAISDK');
  const { generateText, generateObject, jsonSchema, model, streamText } = given as Partial<AISDKOptions<TModel, TSchema>>;
  const stream = readStream(given['stream']);
  if (stream && typeof streamText !== 'function') {
    throw new TypeError(`Expected \`streamText\` to be the AI SDK's streamText (import { streamText } from 'ai'), which \`stream: true\` calls, got ${describeValue(streamText)}.`);
  }
  if (!stream && typeof generateText !== 'function') {
    throw new TypeError(`Expected \`generateText\` to be the AI SDK's generateText (import { generateText } from 'ai'), got ${describeValue(generateText)}.`);
  }
  const system = readSystem(given['system']);
  const responseFormat = readResponseFormat(given['responseFormat']);
  const samples = readSampleSettings(given);
  if (stream && responseFormat !== 'text') {
    throw new TypeError(
      `\`stream: true\` streams text through \`streamText\`, and \`responseFormat: '${responseFormat}'\` asks for the SDK's object output, which Booth does not stream: leave \`stream\` out, or use responseFormat 'text'.`,
    );
  }
  if (responseFormat !== 'text' && typeof generateObject !== 'function') {
    throw new TypeError(`\`responseFormat: '${responseFormat}'\` needs the SDK's object output: pass \`generateObject\` (from 'ai') too.`);
  }
  if (responseFormat === 'json_schema' && typeof jsonSchema !== 'function') {
    throw new TypeError("`responseFormat: 'json_schema'` needs the SDK's `jsonSchema` helper (from 'ai') to wrap the envelope's schema: pass `jsonSchema` too.");
  }
  const shared = (prompt: string, info: CallInfo): AISDKCallLike<TModel> => {
    const chat = systemAndTurns(system, prompt, info);
    return { model: model as TModel, ...(chat.system === undefined ? {} : { system: chat.system }), messages: chat.turns, ...sampling(samples, info), abortSignal: info.signal };
  };
  if (stream) return async (prompt, info) => aiSDKStream(streamText!, shared(prompt, info), info);
  if (responseFormat === 'text') {
    return async (prompt, info) => {
      const { text, usage } = await generateText!(shared(prompt, info)).then((generated) => generated, rethrowAISDKError);
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
      rethrowAISDKError(error);
    }
    reportAISDKUsage(info, generated.usage);
    return JSON.stringify(generated.object);
  };
}

/** A text delta (`text` from version 5 on, `textDelta` before), an error, or the finish with its usage (`totalUsage`, or `usage` before version 5). */
interface StreamPart {
  readonly type: string;
  readonly text?: unknown;
  readonly textDelta?: unknown;
  readonly error?: unknown;
  readonly totalUsage?: unknown;
  readonly usage?: unknown;
}

/**
 * The reply of `streamText` as its parts arrive. The SDK sends its request only as the
 * stream is read, and makes its errors parts of the stream: the first text is read before
 * the call returns, so an HTTP error rejects the call, as `generateText`'s would, with the
 * SDK's own error. An error after it fails the iteration with a transient `ProviderError`.
 */
async function aiSDKStream<TModel>(streamText: StreamTextLike<TModel>, call: AISDKCallLike<TModel>, info: CallInfo): Promise<AsyncIterableIterator<string>> {
  const link = linkedAbort(info.signal);
  let result: AISDKStreamLike;
  try {
    // Its errors are read from the stream: without onError the SDK would also log each to the console.
    result = await streamText({ ...call, abortSignal: link.signal, onError: () => {} });
  } catch (error) {
    link.dispose();
    throw error;
  }
  const parts: AsyncIterable<StreamPart> = result.fullStream ?? textParts(result.textStream);
  const iterator = parts[Symbol.asyncIterator]();
  let usage: unknown;
  let count = 0;
  const textOf = (part: StreamPart): string => {
    count++;
    if (part.type === 'text-delta' || part.type === 'text') {
      const text = part.text ?? part.textDelta;
      return typeof text === 'string' ? text : '';
    }
    if (part.type === 'error') throw streamFailure(part.error, info.signal, 200, `The AI SDK's stream failed after ${count - 1} parts`);
    if (part.type === 'finish') usage = part.totalUsage ?? part.usage;
    return '';
  };
  // Up to the first text: an error here is the call's, as the SDK gave it.
  let first = '';
  try {
    while (first === '') {
      const next = await iterator.next();
      if (next.done) break;
      if (next.value.type === 'error') throw next.value.error;
      first = textOf(next.value);
    }
  } catch (error) {
    link.abort();
    link.dispose();
    if (info.signal?.aborted) throw info.signal.reason;
    rethrowAISDKError(error);
  }
  const replayed: AsyncIterable<StreamPart> = {
    [Symbol.asyncIterator]: () => ({
      next: () => {
        if (first === '') return iterator.next();
        const text = first;
        first = '';
        return Promise.resolve({ done: false, value: { type: REPLAYED, text } });
      },
      return: async () => (await iterator.return?.()) ?? { done: true, value: undefined },
    }),
  };
  return eventTextStream(replayed, {
    outer: info.signal,
    link,
    what: "The AI SDK's stream",
    // The first text, read already, is not counted again.
    textsOf: (part) => [part.type === REPLAYED ? (part.text as string) : textOf(part)],
    async finish() {
      if (usage !== undefined) return;
      // Without a finish part (a bare textStream), the result's promises have the usage.
      usage = await Promise.resolve(result.totalUsage ?? result.usage).then(
        (counted) => counted,
        () => undefined,
      );
    },
    report: () => reportAISDKUsage(info, usage),
  });
}

/**
 * The SDK's HTTP errors (`APICallError`, with `statusCode` and `responseHeaders`; a
 * `RetryError` after the SDK's own retries, with its `lastError`) become `ProviderError`s,
 * so `callRetries` reads their status and Retry-After as it does other adapters'. The SDK's
 * message is kept, its URLs redacted; the error is the `cause`. Anything else passes as it is.
 */
function rethrowAISDKError(error: unknown): never {
  const http = (candidate: unknown) => typeof (candidate as { statusCode?: unknown } | null)?.statusCode === 'number';
  const last = (error as { lastError?: unknown } | null)?.lastError;
  const source = http(error) ? error : http(last) ? last : null;
  if (source === null) throw error;
  const { statusCode, responseHeaders } = source as { statusCode: number; responseHeaders?: unknown };
  const headers = responseHeaders !== null && typeof responseHeaders === 'object' ? (responseHeaders as Record<string, unknown>) : {};
  const retryAfterMs = retryAfter({ get: (name) => (typeof headers[name] === 'string' ? headers[name] : null) });
  const message = (error as { message?: unknown }).message;
  throw new ProviderError(statusCode, typeof message === 'string' ? redactUrls(message) : '', retryAfterMs, { cause: error });
}

/** The type of the first text part, given again once the call has returned. */
const REPLAYED = 'booth-replayed-text';

/** A bare `textStream` as text-delta parts. */
async function* textParts(texts: AsyncIterable<string>): AsyncGenerator<StreamPart> {
  for await (const text of texts) yield { type: 'text-delta', text };
}

/** The SDK's counts as it gives them, whichever version's names they have. */
function reportAISDKUsage(info: CallInfo, usage: unknown): void {
  const { inputTokens, outputTokens, promptTokens, completionTokens, totalTokens } = (usage ?? {}) as Record<string, unknown>;
  // Version 4 counts NaN when the provider said nothing; not being a count, it reports nothing.
  reportTokens(info, inputTokens ?? promptTokens, outputTokens ?? completionTokens, totalTokens);
}
