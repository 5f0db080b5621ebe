import type { AsyncCallFn, CallInfo } from '../decide/model-call.js';
import { shownUrl } from '../util/urls.js';
import { describeValue, isPlainObject } from '../util/values.js';
import { ProviderError, providerExplanation, reach, readHeaders, retryAfter } from './http.js';
import { readShape } from '../options/read-options.js';
import { chatOf, chatResponseFormat, readResponseFormat, readSampleSettings, readSystem, reportChatUsage, type ResponseFormat, sampling } from './request.js';
import { EventStreamReader, type ServerSentEvent } from './sse.js';
import { type LinkedAbort, linkedAbort, readStream, streamFailure, textStream } from './stream.js';

/** `openAICompatible()`: any server that speaks OpenAI's chat completions API, over fetch. */

export interface OpenAICompatibleOptions {
  /** The API root, e.g. `https://api.openai.com/v1`, `http://localhost:11434/v1` (Ollama), `http://localhost:8000/v1` (vLLM). */
  readonly baseURL: string;
  readonly model: string;
  /** Sent as `Authorization: Bearer …` when given. */
  readonly apiKey?: string | undefined;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** The temperature of every call but a sample's. */
  readonly temperature?: number | undefined;
  /** The temperature of the calls of `samples` above 1: default 1, so the samples differ. 0 is a `RangeError`. */
  readonly sampleTemperature?: number | undefined;
  /** Sent as `seed`; a sample's call is sent `seed + sample` (from 0 without one), so each sample has its own. */
  readonly seed?: number | undefined;
  /** Put before the run's system message (the check's `system` and Booth's instructions). */
  readonly system?: string | undefined;
  /** `'json_schema'` asks for structured output in the envelope's schema; see `ResponseFormat`. Default `'text'`. */
  readonly responseFormat?: ResponseFormat | undefined;
  /** Merged into the request body last: `{ max_tokens: 256 }`. */
  readonly extraBody?: Readonly<Record<string, unknown>> | undefined;
  /**
   * Stream the reply (server-sent events, `stream: true` with `stream_options: { include_usage: true }`):
   * the call returns its text chunks as they arrive, for `acheck()`, which can then decide
   * before the reply is whole and end the request early. Default false.
   */
  readonly stream?: boolean | undefined;
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
  const given = readShape(options, OPTION_KEYS, '`openAICompatible()` options', 'openAICompatible');
  const { baseURL, model, apiKey, headers, extraBody } = given as Partial<OpenAICompatibleOptions>;
  const system = readSystem(given['system']);
  const responseFormat = readResponseFormat(given['responseFormat']);
  const samples = readSampleSettings(given);
  readExtraBody(extraBody);
  const stream = readStream(given['stream']);
  const parsed = readBaseURL(baseURL);
  if (parsed.username !== '' || parsed.password !== '') {
    // fetch() refuses such a URL, and would quote it whole in its error, key included.
    throw new TypeError(
      `Expected \`baseURL\` without a user name or password, got ${JSON.stringify(shownUrl(baseURL as string))}: give the key as \`apiKey\` (sent as Authorization: Bearer …) or in \`headers\`.`,
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
    // A stream's request is aborted by the caller's signal or by the end of the iteration.
    const link = stream ? linkedAbort(info.signal) : null;
    const signal = link?.signal ?? info.signal;
    let response: Response;
    try {
      response = await reach(url, shown, {
        method: 'POST',
        headers: requestHeaders,
        body: JSON.stringify({
          model,
          messages: chatOf(system, prompt, info),
          ...sampling(samples, info),
          ...chatResponseFormat(responseFormat, info),
          ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
          ...extraBody,
        }),
        ...(signal ? { signal } : {}),
      }, info.signal);
    } catch (error) {
      link?.dispose();
      throw error;
    }
    // A server that does not stream (an old one, a proxy) answers with one completion: it is read whole.
    if (link === null || !response.ok || !/^text\/event-stream\b/i.test(response.headers.get('content-type') ?? '')) {
      link?.dispose();
      return wholeReply(response, shown, info);
    }
    return chatStream(response, shown, info, link);
  };
}

/** A response read whole: an HTTP error becomes a `ProviderError`, a completion its content. */
async function wholeReply(response: Response, shown: string, info: CallInfo): Promise<string> {
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
}

/** A chunk of a streamed chat completion, as the server sent it: any JSON at all, so each part is checked where it is read. */
interface ChatChunkBody {
  readonly choices?: unknown;
  readonly usage?: unknown;
  readonly error?: unknown;
}

/**
 * The content deltas of a streamed chat completion (`choices[0].delta.content`), read as the
 * events arrive. The usage of its last chunk (`stream_options.include_usage`) is reported
 * when the stream ends. A stream must end with `data: [DONE]` or after a `finish_reason`: one
 * that breaks off, or sends an error, fails the call with a `ProviderError` that
 * `callRetries` may retry. The messages say where the stream stopped, never what it said:
 * an event's data is the error's `body`.
 */
function chatStream(response: Response, shown: string, info: CallInfo, link: LinkedAbort): AsyncIterableIterator<string> {
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  const events = new EventStreamReader();
  const { status } = response;
  let usage: unknown;
  let count = 0;
  let finished = false;
  let ended = false;
  let content = false;
  let refused = false;

  const failure = (message: string, data: string | null) => new ProviderError(status, `${shown} ${message}`, null, { body: data });
  const textsOf = (received: readonly ServerSentEvent[]): string[] => {
    const texts: string[] = [];
    for (const { event, data } of received) {
      if (ended) break;
      count++;
      if (data.trim() === '[DONE]') {
        ended = true;
        break;
      }
      let chunk: ChatChunkBody | null;
      try {
        chunk = JSON.parse(data) as ChatChunkBody | null;
      } catch {
        if (event === 'error') throw failure(`sent an error event in its stream after ${count - 1} events (not JSON, ${data.length} characters; see the error's body).`, data);
        throw failure(`sent a malformed event in its stream, event ${count} (not JSON, ${data.length} characters; see the error's body).`, data);
      }
      if (event === 'error' || (chunk !== null && typeof chunk === 'object' && chunk.error !== undefined && chunk.error !== null)) {
        const explanation = providerExplanation(data);
        throw failure(`sent an error in its stream after ${count - 1} events${explanation === null ? '' : `: ${explanation}`}`, data);
      }
      if (chunk?.usage !== undefined && chunk.usage !== null) usage = chunk.usage;
      const choices = Array.isArray(chunk?.choices) ? (chunk.choices as unknown[]) : [];
      const choice = choices.find((item) => ((item as { index?: unknown } | null)?.index ?? 0) === 0) as
        | { delta?: { content?: unknown; refusal?: unknown } | null; finish_reason?: unknown }
        | null
        | undefined;
      const delta = choice?.delta;
      if (typeof delta?.content === 'string') {
        content = true;
        texts.push(delta.content);
      }
      if (typeof delta?.refusal === 'string') refused = true;
      if (typeof choice?.finish_reason === 'string') finished = true;
    }
    return texts;
  };
  const whole = () => {
    if (!ended && !finished) throw failure(`ended its stream after ${count} events without a finish_reason or data: [DONE]; the reply may be cut short.`, null);
    if (!content) {
      throw failure(`streamed no choices[0].delta.content${refused ? ', and the model refused (choices[0].delta.refusal)' : ''}.`, null);
    }
  };

  return textStream({
    async read() {
      if (ended) return null;
      if (reader === undefined) {
        whole();
        return null;
      }
      const piece = await reader.read().catch((error: unknown) => {
        throw streamFailure(error, info.signal, status, `${shown} broke off its stream after ${count} events`);
      });
      if (piece.done) {
        const texts = textsOf([...events.push(decoder.decode()), ...events.end()]);
        whole();
        ended = true;
        return texts;
      }
      const texts = textsOf(events.push(decoder.decode(piece.value, { stream: true })));
      if (ended) {
        whole();
        // Whatever follows [DONE] is not read: the request is done with.
        reader.cancel().catch(() => {});
      }
      return texts;
    },
    cancel() {
      link.abort();
      reader?.cancel().catch(() => {});
    },
    settle() {
      link.dispose();
      if (usage !== undefined) reportChatUsage(info, usage);
    },
  });
}

/** The body's fields Booth writes: one in `extraBody` would override the options, or make every sample the same call. */
const BOOTH_FIELDS: Readonly<Record<string, string>> = {
  model: 'give it as `model`',
  messages: 'the messages are the run\'s: give `system` here, or `system` and `messages` to the check',
  temperature: 'give it as `temperature` (and `sampleTemperature` for samples)',
  seed: 'give it as `seed`: each sample is then sent its own',
  response_format: 'give `responseFormat`',
  stream: 'give `stream: true` as an option, and the reply is read as a stream',
  stream_options: 'Booth asks for the usage with `stream: true`',
};

function readExtraBody(extraBody: unknown): void {
  if (extraBody === undefined) return;
  if (!isPlainObject(extraBody)) throw new TypeError(`Expected \`extraBody\` to be an object of request fields such as { max_tokens: 256 }, got ${describeValue(extraBody)}.`);
  for (const key of Object.keys(extraBody)) {
    if (Object.hasOwn(BOOTH_FIELDS, key)) throw new TypeError(`Expected \`extraBody\` without \`${key}\`, which Booth sets: ${BOOTH_FIELDS[key]}.`);
  }
}

const OPTION_KEYS = ['baseURL', 'model', 'apiKey', 'headers', 'temperature', 'sampleTemperature', 'seed', 'system', 'responseFormat', 'extraBody', 'stream'] as const;

/**
 * The API root, refused before any call unless it is an http(s) URL: `localhost:8080/v1`
 * parses as a URL of the scheme `localhost:`, and would fail every call alike.
 */
export function readBaseURL(baseURL: unknown): URL {
  const example = '"http://localhost:11434/v1"';
  if (typeof baseURL !== 'string' || !URL.canParse(baseURL)) {
    const got = typeof baseURL === 'string' ? describeValue(shownUrl(baseURL)) : describeValue(baseURL);
    throw new TypeError(`Expected \`baseURL\` to be a URL such as ${example}, got ${got}.`);
  }
  const parsed = new URL(baseURL);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError(`Expected \`baseURL\` to start with http:// or https://, such as ${example}, got ${describeValue(shownUrl(baseURL))}.`);
  }
  return parsed;
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
export function kindOf(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
